#include "planner/plan_reader.h"

#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace hostccl::plan {

using nlohmann::json;

bool readPlanFile(const std::string& path, size_t index, Plan* out, std::string* why, double* predictedStepMs) {
    std::ifstream f(path);
    if (!f) return *why = fmt::format("cannot read {}", path), false;
    std::stringstream text;
    text << f.rdbuf();
    json doc = json::parse(text.str(), nullptr, false);
    auto fail = [&](const std::string& what) {
        *why = fmt::format("{}: {}", path, what);
        return false;
    };
    if (doc.is_discarded() || !doc.is_object()) return fail("not a plan file (JSON object expected)");
    auto plans = doc.find("plans");
    if (plans == doc.end() || !plans->is_array()) return fail("plans: missing");
    if (index >= plans->size()) return fail(fmt::format("plans: no plan {} (the file has {})", index + 1, plans->size()));
    const json& j = (*plans)[index];
    const std::string at = fmt::format("plans[{}]", index);
    Plan p;
    auto whole = [&](const char* key, auto* into) {
        auto v = j.find(key);
        if (v == j.end() || !v->is_number_unsigned()) return fail(fmt::format("{}.{}: missing or not a whole number", at, key));
        *into = v->get<std::remove_pointer_t<decltype(into)>>();
        return true;
    };
    if (!whole("dp", &p.dp) || !whole("tp", &p.tp) || !whole("pp", &p.pp) || !whole("micro_batches", &p.microBatches) ||
        !whole("bucket_bytes", &p.bucketBytes) || !whole("first_bucket_bytes", &p.firstBucketBytes))
        return false;
    auto comp = j.find("compression");
    auto overlap = j.find("overlap");
    if (comp == j.end() || !comp->is_string()) return fail(at + ".compression: missing or not a string");
    if (overlap == j.end() || !overlap->is_boolean()) return fail(at + ".overlap: missing or not true/false");
    p.compression = comp->get<std::string>();
    p.overlap = overlap->get<bool>();
    auto starts = j.find("stage_starts");
    if (starts == j.end() || !starts->is_array() || starts->size() != p.pp)
        return fail(fmt::format("{}.stage_starts: missing or not one first layer per stage ({})", at, p.pp));
    for (const json& s : *starts) {
        if (!s.is_number_unsigned()) return fail(at + ".stage_starts: not whole numbers");
        p.stageStarts.push_back(s.get<uint32_t>());
    }
    double predicted = 0;
    if (auto pr = j.find("predicted"); pr != j.end()) {
        auto ms = pr->is_object() ? pr->find("step_ms") : pr->end();
        if (!pr->is_object() || ms == pr->end() || !ms->is_number() || ms->get<double>() < 0)
            return fail(at + ".predicted.step_ms: missing or not a number of at least 0");
        predicted = ms->get<double>();
    }
    *out = p;
    if (predictedStepMs != nullptr) *predictedStepMs = predicted;
    return true;
}

}  // namespace hostccl::plan
