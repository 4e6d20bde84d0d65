#include "algorithms/algo_override.h"

#include <fmt/format.h>

#include <optional>
#include <utility>
#include <vector>

namespace hostccl {

namespace {
std::vector<std::string> split(const std::string& s, char sep) {
    std::vector<std::string> parts;
    size_t start = 0;
    for (size_t i = 0; i <= s.size(); ++i) {
        if (i == s.size() || s[i] == sep) {
            parts.push_back(s.substr(start, i - start));
            start = i + 1;
        }
    }
    return parts;
}

template <typename T, size_t N>
std::optional<T> lookup(const std::pair<const char*, T> (&table)[N], const std::string& name) {
    for (const auto& [n, value] : table)
        if (name == n) return value;
    return std::nullopt;
}

std::optional<AlgoFamily> familyOf(const std::string& name) {
    static const std::pair<const char*, AlgoFamily> names[] = {
        {"ring", AlgoFamily::Ring},          {"H-D_R", AlgoFamily::HalvingDoubling},
        {"NHR", AlgoFamily::Hierarchical},   {"NHR_V1", AlgoFamily::Hierarchical},
        {"AHC", AlgoFamily::Hierarchical},   {"AHC_BROKE", AlgoFamily::Hierarchical},
        {"pipeline", AlgoFamily::Hierarchical}, {"NB", AlgoFamily::Bruck},
        {"pairwise", AlgoFamily::Pairwise},  {"fullmesh", AlgoFamily::Direct},
        {"null", AlgoFamily::Auto},          {"NA", AlgoFamily::Auto},
        {"halving-doubling", AlgoFamily::HalvingDoubling}, {"hierarchical", AlgoFamily::Hierarchical},
        {"bruck", AlgoFamily::Bruck},        {"direct", AlgoFamily::Direct},
        {"recursive-doubling", AlgoFamily::RecursiveDoubling}, {"binomial", AlgoFamily::Binomial},
        {"core-leaders", AlgoFamily::CoreLeaders}, {"auto", AlgoFamily::Auto},
    };
    return lookup(names, name);
}

std::optional<AlgoOp> opOf(const std::string& name) {
    static const std::pair<const char*, AlgoOp> names[] = {
        {"allgather", AlgoOp::AllGather}, {"reducescatter", AlgoOp::ReduceScatter},
        {"allreduce", AlgoOp::AllReduce}, {"broadcast", AlgoOp::Broadcast},
        {"reduce", AlgoOp::Reduce},       {"scatter", AlgoOp::Scatter},
        {"alltoall", AlgoOp::AlltoAll},
    };
    return lookup(names, name);
}

// "level0:NA;level1:X;level2:Y" -> the level1 family.
bool parseLevels(const std::string& text, AlgoFamily* family, std::string* why) {
    bool seen[3] = {false, false, false};
    for (const std::string& item : split(text, ';')) {
        size_t colon = item.find(':');
        std::string level = item.substr(0, colon);
        if (colon == std::string::npos || level.size() != 6 || level.compare(0, 5, "level") != 0 || level[5] < '0' ||
            level[5] > '2') {
            *why = fmt::format("'{}' is not levelN:<algorithm> (N = 0, 1 or 2)", item);
            return false;
        }
        int n = level[5] - '0';
        if (seen[n]) {
            *why = fmt::format("{} is given twice", level);
            return false;
        }
        seen[n] = true;
        std::string name = item.substr(colon + 1);
        auto f = familyOf(name);
        if (!f) {
            *why = fmt::format("unknown algorithm '{}' for {}", name, level);
            return false;
        }
        if (n == 0 && name != "NA") {
            *why = fmt::format("level0 must be NA (got '{}')", name);
            return false;
        }
        if (n == 1) *family = *f;
    }
    if (!seen[1]) {
        *why = fmt::format("'{}' names no level1 algorithm", text);
        return false;
    }
    return true;
}
}  // namespace

AlgoOp algoOpOf(CollType t) {
    switch (t) {
        case CollType::AllGather:
        case CollType::AllGatherV: return AlgoOp::AllGather;
        case CollType::ReduceScatter:
        case CollType::ReduceScatterV: return AlgoOp::ReduceScatter;
        case CollType::AllReduce: return AlgoOp::AllReduce;
        case CollType::Broadcast: return AlgoOp::Broadcast;
        case CollType::Reduce: return AlgoOp::Reduce;
        case CollType::Scatter: return AlgoOp::Scatter;
        case CollType::AlltoAll:
        case CollType::AlltoAllV:
        case CollType::AlltoAllVC: return AlgoOp::AlltoAll;
        default: return AlgoOp::None;
    }
}

const char* familyName(AlgoFamily f) {
    switch (f) {
        case AlgoFamily::Auto: return "auto";
        case AlgoFamily::Ring: return "ring";
        case AlgoFamily::HalvingDoubling: return "halving-doubling";
        case AlgoFamily::Hierarchical: return "hierarchical";
        case AlgoFamily::Bruck: return "bruck";
        case AlgoFamily::Pairwise: return "pairwise";
        case AlgoFamily::Direct: return "direct";
        case AlgoFamily::RecursiveDoubling: return "recursive-doubling";
        case AlgoFamily::Binomial: return "binomial";
        case AlgoFamily::CoreLeaders: return "core-leaders";
    }
    return "?";
}

bool parseAlgoOverride(const std::string& text, AlgoOverride* out, std::string* why) {
    AlgoOverride result;
    if (text.empty()) {
        *out = result;
        return true;
    }
    if (text.find('=') == std::string::npos) {  // global form: every operator
        AlgoFamily f = AlgoFamily::Auto;
        if (!parseLevels(text, &f, why)) return false;
        result.family.fill(f);
        *out = result;
        return true;
    }
    bool given[kAlgoOps] = {};
    for (const std::string& entry : split(text, '/')) {
        size_t eq = entry.find('=');
        auto op = opOf(entry.substr(0, eq));
        if (eq == std::string::npos || !op) {
            *why = fmt::format("'{}' does not start with an operator (allgather, reducescatter, allreduce, "
                               "broadcast, reduce, scatter, alltoall) and '='", entry);
            return false;
        }
        if (given[size_t(*op)]) {
            *why = fmt::format("operator '{}' is given twice", entry.substr(0, eq));
            return false;
        }
        given[size_t(*op)] = true;
        if (!parseLevels(entry.substr(eq + 1), &result.family[size_t(*op)], why)) return false;
    }
    *out = result;
    return true;
}

}  // namespace hostccl
