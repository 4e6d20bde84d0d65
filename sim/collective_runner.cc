#include "sim/collective_runner.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "algorithms/selector.h"

namespace hostccl::sim {

namespace {
constexpr size_t kElem = sizeof(int32_t);  // int32 sums: exact at any rank count here

// What rank r contributes at element i: small, signed, different per rank and place.
int32_t value(uint32_t r, uint64_t i) { return static_cast<int32_t>((uint64_t(r) * 131 + i * 7) % 2001) - 1000; }

// Collectives whose count is per peer: the size covers n blocks.
bool perPeer(CollType t) { return t == CollType::AllGather || t == CollType::ReduceScatter || t == CollType::AlltoAllV; }

std::vector<uint64_t> uniform(uint32_t n, uint64_t v) { return std::vector<uint64_t>(n, v); }
std::vector<uint64_t> strided(uint32_t n, uint64_t stride) {
    std::vector<uint64_t> d(n);
    for (uint32_t i = 0; i < n; ++i) d[i] = i * stride;
    return d;
}

// The arguments the API layer would build (src/api/ops_api.cc), without buffers.
CollArgs argsFor(const OpSpec& s, uint32_t n) {
    CollArgs a;
    const uint64_t c = elementsPerRank(s.type, s.bytes, n);
    a.type = s.type;
    a.dtype = HCCL_DATA_TYPE_INT32;
    a.op = HCCL_REDUCE_SUM;
    a.root = s.root;
    a.count = c;
    if (s.type == CollType::AllGather) {
        a.recvCounts = uniform(n, c);
        a.recvDispls = strided(n, c);
    } else if (s.type == CollType::ReduceScatter) {
        a.sendCounts = uniform(n, c);
        a.sendDispls = strided(n, c);
    } else if (s.type == CollType::AlltoAllV) {  // HcclAlltoAll arrives as the V form
        setPlainAlltoAll(&a, n, c);
    }
    return a;
}

// Elements of each rank's input and output buffers.
std::pair<uint64_t, uint64_t> extents(CollType t, uint64_t c, uint32_t n) {
    switch (t) {
        case CollType::AllGather: return {c, c * n};
        case CollType::ReduceScatter: return {c * n, c};
        case CollType::AlltoAllV: return {c * n, c * n};
        default: return {c, c};
    }
}

// The exact result rank r must hold at element i.
int64_t expected(const OpSpec& s, uint32_t n, uint64_t c, uint32_t r, uint64_t i) {
    auto sum = [n](uint64_t at) {
        int64_t acc = 0;
        for (uint32_t q = 0; q < n; ++q) acc += value(q, at);
        return acc;
    };
    switch (s.type) {
        case CollType::AllReduce:
        case CollType::Reduce: return sum(i);
        case CollType::Broadcast: return value(s.root, i);
        case CollType::AllGather: return value(static_cast<uint32_t>(i / c), i % c);
        case CollType::ReduceScatter: return sum(uint64_t(r) * c + i);
        default: return value(static_cast<uint32_t>(i / c), uint64_t(r) * c + i % c);  // all-to-all
    }
}

// Element-wise sums are the same on every rank: computed once per element.
std::string check(const OpSpec& s, uint32_t n, uint64_t c, const std::vector<std::vector<int32_t>>& out) {
    const bool summed = s.type == CollType::AllReduce || s.type == CollType::Reduce;
    std::vector<int64_t> sums;
    if (summed) {
        sums.resize(c);
        for (uint64_t i = 0; i < c; ++i) sums[i] = expected(s, n, c, 0, i);
    }
    for (uint32_t r = 0; r < n; ++r) {
        if (s.type == CollType::Reduce && r != s.root) continue;
        for (uint64_t i = 0; i < out[r].size(); ++i) {
            const int64_t want = summed ? sums[i] : expected(s, n, c, r, i);
            if (out[r][i] != want)
                return fmt::format("rank {} element {} is {}, expected {}", r, i, out[r][i], want);
        }
    }
    return "";
}
}  // namespace

const std::vector<CollType>& simulatedCollectives() {
    static const std::vector<CollType> all{CollType::AllReduce, CollType::AllGather, CollType::ReduceScatter,
                                           CollType::Broadcast, CollType::Reduce,    CollType::AlltoAllV};
    return all;
}

const char* collectiveKey(CollType t) {
    switch (t) {
        case CollType::AllReduce: return "allreduce";
        case CollType::AllGather: return "allgather";
        case CollType::ReduceScatter: return "reducescatter";
        case CollType::Broadcast: return "broadcast";
        case CollType::Reduce: return "reduce";
        case CollType::AlltoAllV: return "alltoall";
        default: return "?";
    }
}

bool collectiveFromKey(const std::string& key, CollType* out) {
    for (CollType t : simulatedCollectives())
        if (key == collectiveKey(t)) {
            *out = t;
            return true;
        }
    return false;
}

uint64_t elementsPerRank(CollType t, uint64_t bytes, uint32_t ranks) {
    return bytes / (perPeer(t) ? kElem * ranks : kElem);  // rounded down, as nccl-tests do
}

double busFactor(CollType t, uint32_t n) {
    switch (t) {
        case CollType::AllReduce: return 2.0 * (n - 1) / n;
        case CollType::AllGather:
        case CollType::ReduceScatter:
        case CollType::AlltoAllV: return double(n - 1) / n;
        default: return 1;
    }
}

double OpOutcome::algbw() const { return seconds > 0 ? double(spec.bytes) / seconds : 0; }
double OpOutcome::busbw() const { return algbw() * busFactor(spec.type, ranks); }

std::vector<std::string> candidateNames(Simulation& sim, const OpSpec& spec) {
    CollArgs a = argsFor(spec, sim.ranks());
    CommView& view = sim.view(0);
    Context ctx(view, a, Deadline::never(), &sim.failure(0));
    std::vector<std::string> names;
    for (const Algorithm* algo : usableCandidates(ctx)) names.push_back(algo->name());
    return names;
}

OpOutcome runCollective(Simulation& sim, const OpSpec& spec) {
    const uint32_t n = sim.ranks();
    OpOutcome o;
    o.spec = spec;
    o.ranks = n;
    const uint64_t c = elementsPerRank(spec.type, spec.bytes, n);
    if (c == 0) {
        o.error = fmt::format("{} B is less than one int32 element per rank on {} ranks", spec.bytes, n);
        return o;
    }
    o.spec.bytes = c * kElem * (perPeer(spec.type) ? n : 1);  // what the op really moves (rounded down)
    const auto [inElems, outElems] = extents(spec.type, c, n);
    // Carrying data: a buffer pair per rank. Sizes only: one pair for all, which
    // nothing reads or writes (no bytes move), so it is left uninitialised and its
    // pages are never touched (a 1 GiB point would otherwise fault in and fill 2 GiB).
    const bool data = sim.carriesData();
    std::vector<std::vector<int32_t>> in(data ? n : 0), out(data ? n : 0);
    std::unique_ptr<int32_t[]> untouchedIn, untouchedOut;
    const bool inPlace = spec.type == CollType::Broadcast;  // HcclBroadcast has one buffer
    if (data) {
        for (uint32_t r = 0; r < n; ++r) {
            in[r].resize(inElems);
            for (uint64_t i = 0; i < inElems; ++i) in[r][i] = value(r, i);
            out[r] = inPlace ? in[r] : std::vector<int32_t>(outElems);
        }
    } else {
        untouchedIn.reset(new int32_t[std::max<uint64_t>(inElems, 1)]);
        untouchedOut.reset(new int32_t[std::max<uint64_t>(outElems, 1)]);
    }
    std::vector<std::string> ran(n);
    double modelSeconds = 0;
    // Sizes only, every rank runs on the same arguments (their vectors are O(ranks)).
    CollArgs shared = argsFor(spec, n);
    shared.recvBuf = data ? out[0].data() : untouchedOut.get();
    shared.sendBuf = inPlace ? shared.recvBuf : data ? in[0].data() : untouchedIn.get();
    auto body = [&](uint32_t r) {
        CollArgs own;
        if (data) {
            own = shared;
            own.sendBuf = inPlace ? out[r].data() : in[r].data();
            own.recvBuf = out[r].data();
        }
        const CollArgs& a = data ? own : shared;
        CommView& view = sim.view(r);
        view.seq += 1;
        Context ctx(view, a, Deadline::never(), &sim.failure(r));
        const Algorithm* algo = &selectAlgorithm(ctx);
        if (!spec.algorithm.empty()) {
            algo = nullptr;
            for (const Algorithm* cand : usableCandidates(ctx))
                if (spec.algorithm == cand->name()) algo = cand;
        }
        if (algo == nullptr) return;  // reported below
        ran[r] = algo->name();
        if (r == 0) modelSeconds = estimatedSeconds(ctx, *algo);
        algo->run(ctx);
    };
    std::string why;
    const uint64_t messagesBefore = sim.messages();
    sim.setWorkingSet(std::max<uint64_t>(spec.workingSetBytes,
                                         (inPlace ? outElems : inElems + outElems) * kElem * sim.platform().ranksPerHost));
    if (!sim.run(body, 0, &why)) {
        o.error = why;
        return o;
    }
    o.messages = sim.messages() - messagesBefore;
    if (ran[0].empty()) {
        o.error = fmt::format("{} cannot run {} here", spec.algorithm, collectiveKey(spec.type));
        return o;
    }
    o.algorithm = ran[0];
    o.modelSeconds = modelSeconds;
    for (uint32_t r = 0; r < n; ++r) {
        if (!sim.errorOf(r).empty()) {
            o.error = fmt::format("rank {}: {}", r, sim.errorOf(r));
            return o;
        }
        if (ran[r] != ran[0]) {
            o.error = fmt::format("rank {} ran {} but rank 0 ran {}", r, ran[r], ran[0]);
            return o;
        }
        o.seconds = std::max(o.seconds, sim.finishedAt(r));
    }
    if (data) {
        o.error = check(spec, n, c, out);
        o.checked = true;
    }
    o.ok = o.error.empty();
    return o;
}

}  // namespace hostccl::sim
