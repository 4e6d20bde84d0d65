#include "algorithms/selector.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <unordered_map>

#include "algorithms/bruck/bruck_allgather.h"
#include "algorithms/bruck/bruck_alltoall.h"
#include "algorithms/direct/direct_algorithms.h"
#include "algorithms/dissemination/barrier.h"
#include "algorithms/empty_collective.h"
#include "algorithms/halving_doubling/halving_doubling_gathers.h"
#include "algorithms/halving_doubling/halving_doubling_reduce.h"
#include "algorithms/halving_doubling/phases.h"
#include "algorithms/halving_doubling/rabenseifner.h"
#include "algorithms/halving_doubling/scatter_allgather_broadcast.h"
#include "algorithms/hierarchical/core_leaders.h"
#include "algorithms/hierarchical/hierarchical_allreduce.h"
#include "algorithms/hierarchical/hierarchical_gathers.h"
#include "algorithms/halving_doubling/recursive_doubling.h"
#include "algorithms/linear/scatter.h"
#include "algorithms/p2p/send_recv.h"
#include "algorithms/pairwise/alltoallv.h"
#include "algorithms/ring/ring_algorithms.h"
#include "algorithms/tree/binomial.h"
#include "common/env.h"

namespace hostccl {

namespace {
// Every algorithm, once (declaration order: the direct ones name their fallbacks).
struct Algorithms {
    RingAllReduce ringAllReduce;
    RecursiveDoublingAllReduce recursiveDoubling;
    RabenseifnerAllReduce rabenseifner;
    HalvingReduceScatter halvingReduceScatter;
    DoublingAllGather doublingAllGather;
    BruckAllGather bruckAllGather;
    BruckAlltoAll bruckAlltoAll;
    HalvingDoublingReduce halvingDoublingReduce;
    ScatterAllGatherBroadcast scatterAllGatherBroadcast;
    HierarchicalAllReduce hierarchicalAllReduce;
    HierarchicalAllGather hierarchicalAllGather;
    HierarchicalReduceScatter hierarchicalReduceScatter;
    HierarchicalBroadcast hierarchicalBroadcast;
    CoreLeadersAllReduce coreLeadersAllReduce;
    CoreLeadersAllGather coreLeadersAllGather;
    CoreLeadersReduceScatter coreLeadersReduceScatter;
    CoreLeadersAlltoAll coreLeadersAlltoAll;
    CoreLeadersBarrier coreLeadersBarrier;
    RingAllGather ringAllGather;
    RingReduceScatter ringReduceScatter;
    BinomialBroadcast binomialBroadcast;
    BinomialReduce binomialReduce;
    LinearScatter linearScatter;
    PairwiseAlltoAllV pairwiseAlltoAll;
    DisseminationBarrier barrier;
    EmptyCollective empty;
    PointToPoint p2p;
    DirectAllReduce directAllReduce{ringAllReduce};
    DirectAllGather directAllGather{ringAllGather};
    DirectReduceScatter directReduceScatter{ringReduceScatter};
    DirectBroadcast directBroadcast{binomialBroadcast};
    DirectReduce directReduce{binomialReduce};
    DirectAlltoAllV directAlltoAll{pairwiseAlltoAll};
};

const Algorithms& all() {
    static const Algorithms* a = new Algorithms;  // streams may run ops during exit
    return *a;
}

// Over links every pair must be connected (a mesh, affordable up to 64 ranks);
// threads of one process meet on their board at any size.
bool directPossible(const Context& ctx) { return ctx.sharedMemoryMesh() || ctx.board() != nullptr; }

// The direct algorithm for the op (ranks sharing one host), if there is one.
const Algorithm* directFor(CollType t) {
    const Algorithms& a = all();
    switch (algoOpOf(t)) {
        case AlgoOp::AllReduce: return &a.directAllReduce;
        case AlgoOp::AllGather: return &a.directAllGather;
        case AlgoOp::ReduceScatter: return &a.directReduceScatter;
        case AlgoOp::Broadcast: return &a.directBroadcast;
        case AlgoOp::Reduce: return &a.directReduce;
        case AlgoOp::AlltoAll: return &a.directAlltoAll;
        default: return nullptr;
    }
}

bool equalBlocks(const Context& ctx);

// What HCCL_ALGO's family means for this op here; nullptr when hostccl has no such
// algorithm for it (or, for direct, the ranks do not share one host). Only what every
// rank knows alike may decide: a V form's displacements are each rank's own layout.
const Algorithm* forced(const Context& ctx, AlgoFamily family) {
    const Algorithms& a = all();
    const AlgoOp op = algoOpOf(ctx.args().type);
    switch (family) {
        case AlgoFamily::Ring:
            if (op == AlgoOp::AllReduce) return &a.ringAllReduce;
            if (op == AlgoOp::AllGather) return &a.ringAllGather;
            if (op == AlgoOp::ReduceScatter) return &a.ringReduceScatter;
            return nullptr;
        case AlgoFamily::HalvingDoubling:
            if (op == AlgoOp::AllReduce) return &a.rabenseifner;
            if (op == AlgoOp::Broadcast) return &a.scatterAllGatherBroadcast;
            if (op == AlgoOp::Reduce) return &a.halvingDoublingReduce;
            if (op == AlgoOp::AllGather) return &a.doublingAllGather;
            return op == AlgoOp::ReduceScatter ? &a.halvingReduceScatter : nullptr;
        case AlgoFamily::Hierarchical:
            if (op == AlgoOp::AllReduce) return &a.hierarchicalAllReduce;
            if (op == AlgoOp::AllGather) return &a.hierarchicalAllGather;
            if (op == AlgoOp::ReduceScatter) return &a.hierarchicalReduceScatter;
            return op == AlgoOp::Broadcast ? &a.hierarchicalBroadcast : nullptr;
        case AlgoFamily::Bruck:
            if (ctx.args().type == CollType::AllGather) return &a.bruckAllGather;
            return op == AlgoOp::AlltoAll && equalBlocks(ctx) ? &a.bruckAlltoAll : nullptr;
        case AlgoFamily::Pairwise: return op == AlgoOp::AlltoAll ? &a.pairwiseAlltoAll : nullptr;
        case AlgoFamily::Direct: return directPossible(ctx) ? directFor(ctx.args().type) : nullptr;
        case AlgoFamily::RecursiveDoubling: return op == AlgoOp::AllReduce ? &a.recursiveDoubling : nullptr;
        case AlgoFamily::CoreLeaders:
            if (!coreLeadersUsable(ctx)) return nullptr;
            if (op == AlgoOp::AllReduce) return &a.coreLeadersAllReduce;
            if (op == AlgoOp::AllGather) return &a.coreLeadersAllGather;
            if (op == AlgoOp::AlltoAll) return &a.coreLeadersAlltoAll;
            return op == AlgoOp::ReduceScatter ? &a.coreLeadersReduceScatter : nullptr;
        case AlgoFamily::Binomial:
            if (op == AlgoOp::Broadcast) return &a.binomialBroadcast;
            return op == AlgoOp::Reduce ? &a.binomialReduce : nullptr;
        default: return nullptr;
    }
}

// Once per process and (op, family): the override cannot be honoured for this op.
void noteUnhonoured(const Context& ctx, AlgoFamily family) {
    static std::array<std::atomic<uint32_t>, kAlgoOps + 1> told{};
    const uint32_t bit = uint32_t(1) << size_t(family);
    if (told[size_t(algoOpOf(ctx.args().type))].fetch_or(bit) & bit) return;
    log::warn("HCCL_ALGO asks for {} for {}, which hostccl cannot run for this call (no such algorithm for the "
              "operator, all-to-all-v blocks not equal on every rank, or, for direct, ranks on several hosts); using the "
              "adaptive choice (reported once)",
              familyName(family), collName(ctx.args().type));
}

// A candidate and when it can run the call at all.
struct Candidate {
    const Algorithm* algo;
    bool (*usable)(const Context&);
    // Whether the model may choose it where it can run (null: always); what HCCL_ALGO
    // forces and what the simulator compares need only `usable`.
    bool (*weighed)(const Context&) = nullptr;
};

bool always(const Context&) { return true; }
bool severalHosts(const Context& ctx) { return ctx.nodes() > 1; }
// The plain forms, whose blocks are all the same size on every rank (HcclAlltoAll and a
// uniform HcclAlltoAllVC arrive as the V form saying so, their layouts built packed). An
// HcclAlltoAllV whose own blocks happen to be equal does not count: another rank's may
// not be, and ranks choosing apart deadlock.
bool equalBlocks(const Context& ctx) {
    const CollArgs& a = ctx.args();
    if (a.type == CollType::AllGather || a.type == CollType::AlltoAll) return true;
    return a.type == CollType::AlltoAllV && a.equalEverywhere;
}

// HOSTCCL_DIRECT_MIN_BYTES: unset, the model decides; -1, never; else from that size on.
int64_t directMinBytes() {
    static const int64_t v =
        env::raw("HOSTCCL_DIRECT_MIN_BYTES") ? env::getInt("HOSTCCL_DIRECT_MIN_BYTES", -1, INT64_MAX) : -2;
    return v;
}
// Bruck's all-to-all for HcclAlltoAll (the V form with equal blocks): weighed from
// 16 ranks on, where it sends log2(n) messages instead of n-1. Below that the model
// favours it at small sizes (the pairwise handshake term) while on the 2-core test VM it
// measured no faster than pairwise at 4 ranks up to 4 KiB and slower at 32 KiB
// (14 vs 8 us); HCCL_ALGO=alltoall=level1:NB forces it at any size.
bool bruckAlltoAllWeighed(const Context& ctx) { return ctx.args().type == CollType::AlltoAll || ctx.size() >= 16; }

bool directUsable(const Context& ctx) { return directPossible(ctx) && directMinBytes() != -1; }
// A pairwise all-to-all links every pair: for threads of one process beyond the
// mesh size that is n(n-1)/2 in-process links (tens of GB at 1024 ranks), while the
// direct algorithm on the process board needs none.
// (Unless HOSTCCL_DIRECT_MIN_BYTES says when to use direct: then it is the user's call.)
bool pairwiseAffordable(const Context& ctx) {
    return ctx.sharedMemoryMesh() || ctx.board() == nullptr || directMinBytes() != -2;
}

// A later candidate must beat the earlier ones by this margin: the model is a few
// lines per algorithm and cannot see everything (caches, how TCP interleaves two
// directions on one socket), and the lists put the most robust choices first. On
// the 2-core test VM's sweeps (bench/selector_sweep.sh) differences under 5 % were noise.
constexpr double kMustBeCheaper = 0.95;

// The candidates the model weighs for an operator, most robust first.
std::vector<Candidate> listCandidates(AlgoOp op) {
    const Algorithms& a = all();
    switch (op) {
        case AlgoOp::AllReduce:
            return {{&a.recursiveDoubling, always}, {&a.ringAllReduce, always}, {&a.rabenseifner, always},
                    {&a.hierarchicalAllReduce, severalHosts},
                    {&a.coreLeadersAllReduce, coreLeadersUsable, coreLeadersWeighed},
                    {&a.directAllReduce, directUsable}};
        case AlgoOp::AllGather:
            return {{&a.ringAllGather, always}, {&a.doublingAllGather, always}, {&a.bruckAllGather, equalBlocks},
                    {&a.hierarchicalAllGather, severalHosts},
                    {&a.coreLeadersAllGather, coreLeadersUsable, coreLeadersWeighed},
                    {&a.directAllGather, directUsable}};
        case AlgoOp::ReduceScatter:
            return {{&a.ringReduceScatter, always}, {&a.halvingReduceScatter, always},
                    {&a.hierarchicalReduceScatter, severalHosts},
                    {&a.coreLeadersReduceScatter, coreLeadersUsable, coreLeadersWeighed},
                    {&a.directReduceScatter, directUsable}};
        case AlgoOp::Broadcast:
            return {{&a.binomialBroadcast, always}, {&a.scatterAllGatherBroadcast, always},
                    {&a.hierarchicalBroadcast, severalHosts}, {&a.directBroadcast, directUsable}};
        case AlgoOp::Reduce:
            return {{&a.binomialReduce, always}, {&a.halvingDoublingReduce, always}, {&a.directReduce, directUsable}};
        case AlgoOp::AlltoAll:
            return {{&a.pairwiseAlltoAll, pairwiseAffordable},
                    {&a.bruckAlltoAll, equalBlocks, bruckAlltoAllWeighed},
                    {&a.coreLeadersAlltoAll, coreLeadersUsable, coreLeadersWeighed},
                    {&a.directAlltoAll, directUsable}};
        default: return {};
    }
}

// Built once: choosing must not allocate on every call.
const std::vector<Candidate>& candidatesFor(AlgoOp op) {
    static const auto* table = [] {
        auto* t = new std::array<std::vector<Candidate>, kAlgoOps + 1>;
        for (size_t i = 0; i <= kAlgoOps; ++i) (*t)[i] = listCandidates(AlgoOp(i));
        return t;
    }();
    return (*table)[size_t(op)];
}

// The algorithm of ops with no alternative weighed by size (the barrier moves nothing:
// on crowded cores the leaders' one is the fewer thread switches).
const Algorithm& soleAlgorithm(const Context& ctx) {
    const Algorithms& a = all();
    switch (ctx.args().type) {
        case CollType::Scatter: return a.linearScatter;
        case CollType::Send:
        case CollType::Recv:
        case CollType::BatchSendRecv: return a.p2p;
        default:
            if (coreLeadersUsable(ctx) && coreLeadersWeighed(ctx)) return a.coreLeadersBarrier;
            return a.barrier;
    }
}
}  // namespace

class SelectorCosts {
public:
    explicit SelectorCosts(const CostModel& model) : model_(model) {
        for (size_t op = 0; op < kAlgoOps; ++op)
            for (const Candidate& c : candidatesFor(AlgoOp(op))) cost_.emplace(c.algo, c.algo->cost(model));
    }
    const CostModel& model() const { return model_; }
    double estimate(const Algorithm* a, uint64_t bytes) const { return cost_.at(a).at(double(bytes)); }
    // The model's last pick for (collective, equal blocks, bytes), or -1: ops repeat (a
    // training loop's buckets, a benchmark's iterations), and weighing every candidate
    // again costs a hash lookup each. What makes a candidate usable or weighed is the
    // communicator's and these three, so the pick stands. One word per collective:
    // bytes (48 bits), equal blocks, the candidate's index + 1.
    int rememberedPick(CollType t, bool equal, uint64_t bytes) const {
        const uint64_t w = picks_[size_t(t) % picks_.size()].load(std::memory_order_relaxed);
        return (w & kIndexMask) != 0 && w >> 16 == bytes && ((w >> 8) & 1) == uint64_t(equal) ? int(w & kIndexMask) - 1
                                                                                              : -1;
    }
    void rememberPick(CollType t, bool equal, uint64_t bytes, size_t index) {
        if (bytes >> 48 != 0) return;
        picks_[size_t(t) % picks_.size()].store(bytes << 16 | uint64_t(equal) << 8 | (index + 1),
                                                std::memory_order_relaxed);
    }
    // True the first time (collective, power-of-two size class) is explained.
    bool firstExplanation(CollType t, uint64_t bytes) {
        size_t bucket = 0;
        while (bucket < 63 && (uint64_t(2) << bucket) <= bytes) ++bucket;
        const uint64_t bit = uint64_t(1) << bucket;
        return (explained_[size_t(t) % explained_.size()].fetch_or(bit) & bit) == 0;
    }

private:
    CostModel model_;
    std::unordered_map<const Algorithm*, Linear> cost_;
    std::array<std::atomic<uint64_t>, 32> explained_{};
    static constexpr uint64_t kIndexMask = 0x7f;
    std::array<std::atomic<uint64_t>, 16> picks_{};
};

std::shared_ptr<SelectorCosts> prepareSelector(const CostModel& model) { return std::make_shared<SelectorCosts>(model); }
const CostModel& modelOf(const SelectorCosts& costs) { return costs.model(); }

namespace {
// A data-moving collective whose size, known alike on every rank, is zero bytes
// (the barrier and point-to-point ops have no candidates and always run).
bool nothingToMove(const Context& ctx) {
    return !candidatesFor(algoOpOf(ctx.args().type)).empty() && ctx.sizesAgreed() && ctx.opBytes() == 0;
}

// HcclAlltoAllV's counts are each rank's own, so no size is common to all ranks and
// the choice rests on what is (as Open MPI's fixed rules decide all-to-all-v by
// communicator size alone): pairwise, whose messages are exactly the blocks, unless
// HOSTCCL_DIRECT_MIN_BYTES=0 asks for direct or pairwise would link every pair of
// threads beyond the mesh. Measured on the 2-core test VM (alltoallv_perf, 8 B - 16 MiB): pairwise
// as fast as direct or faster at 2 and 4 ranks; at 8 crowded ranks 4-5x faster up to
// 32 KiB, 4x slower at 256 KiB and 1.2-1.4x from 2 MiB (direct skips crowded hand-offs).
const Algorithm& alltoallOfOwnSizes(const Context& ctx) {
    const Algorithms& a = all();
    if (directUsable(ctx) && (directMinBytes() == 0 || !pairwiseAffordable(ctx))) return a.directAlltoAll;
    return a.pairwiseAlltoAll;
}

// The cheapest usable candidate (direct from HOSTCCL_DIRECT_MIN_BYTES on when set).
const Algorithm& adaptive(const Context& ctx) {
    const AlgoOp op = algoOpOf(ctx.args().type);
    const std::vector<Candidate>& cands = candidatesFor(op);
    if (cands.empty()) return soleAlgorithm(ctx);
    if (!ctx.sizesAgreed()) return alltoallOfOwnSizes(ctx);
    const uint64_t bytes = ctx.opBytes();
    if (directMinBytes() >= 0 && directPossible(ctx) && bytes >= uint64_t(directMinBytes()))
        return *cands.back().algo;  // the direct one closes every list
    SelectorCosts* costs = ctx.costs();
    const CollType type = ctx.args().type;
    const bool equal = ctx.args().equalEverywhere;
    if (costs != nullptr)
        if (const int i = costs->rememberedPick(type, equal, bytes); i >= 0) return *cands[size_t(i)].algo;
    size_t best = cands.size();
    double bestTime = 0;
    for (size_t i = 0; i < cands.size(); ++i) {
        const Candidate& c = cands[i];
        if (!c.usable(ctx) || (c.weighed != nullptr && !c.weighed(ctx)) ||
            (c.usable == directUsable && directMinBytes() >= 0))
            continue;
        const double t = costs != nullptr ? costs->estimate(c.algo, bytes) : 0;
        if (best == cands.size() || t < bestTime * kMustBeCheaper) {
            best = i;
            bestTime = t;
        }
    }
    if (costs != nullptr) costs->rememberPick(type, equal, bytes, best);
    return *cands[best].algo;
}

}  // namespace

std::vector<const Algorithm*> usableCandidates(const Context& ctx) {
    std::vector<const Algorithm*> out;
    for (const Candidate& c : candidatesFor(algoOpOf(ctx.args().type)))
        if (c.usable(ctx)) out.push_back(c.algo);
    return out;
}

double estimatedSeconds(const Context& ctx, const Algorithm& a) {
    return ctx.costs() ? ctx.costs()->estimate(&a, ctx.opBytes()) : 0;
}

std::string explainSelection(const Context& ctx) {
    const uint64_t bytes = ctx.opBytes();
    const Algorithm& chosen = selectAlgorithm(ctx);
    std::string out = fmt::format("[hostccl] explain: comm {} {} {} B over {} ranks on {} host(s):\n", ctx.commName(),
                                  collName(ctx.args().type), bytes, ctx.size(), ctx.nodes());
    for (const Candidate& c : candidatesFor(algoOpOf(ctx.args().type))) {
        const std::string time =
            ctx.costs() ? fmt::format("{:10.1f} us", ctx.costs()->estimate(c.algo, bytes) * 1e6) : "         ?";
        out += fmt::format("  {} {:<20} {}{}\n", c.algo == &chosen ? '*' : ' ', c.algo->name(), time,
                           c.usable(ctx) ? "" : "  (cannot run this call)");
    }
    if (&chosen == &all().empty) out += "  * none (no bytes to move: every rank completes it at once)\n";
    if (!ctx.sizesAgreed() && ctx.forcedFamily() == AlgoFamily::Auto)
        out += fmt::format("  HcclAlltoAllV's sizes are each rank's own: {} by rule, not by size\n", chosen.name());
    if (ctx.forcedFamily() != AlgoFamily::Auto)
        out += fmt::format("  HCCL_ALGO asks for {}: ran {}\n", familyName(ctx.forcedFamily()), chosen.name());
    else if (candidatesFor(algoOpOf(ctx.args().type)).empty())
        out += fmt::format("  * {} (the only algorithm)\n", chosen.name());
    return out;
}

const Algorithm& selectAlgorithm(const Context& ctx) {
    if (nothingToMove(ctx)) return all().empty;
    const AlgoFamily family = ctx.forcedFamily();
    if (family != AlgoFamily::Auto) {
        if (const Algorithm* f = forced(ctx, family)) return *f;
        noteUnhonoured(ctx, family);
    }
    return adaptive(ctx);
}

// Printed by rank 0 only: every rank computes the same table from the same numbers.
void explainIfAsked(const Context& ctx) {
    static const bool enabled = env::getBool("HOSTCCL_ALGO_EXPLAIN");
    if (!enabled || ctx.rank() != 0 || ctx.costs() == nullptr) return;
    if (!ctx.costs()->firstExplanation(ctx.args().type, ctx.opBytes())) return;
    std::fprintf(stderr, "%s", explainSelection(ctx).c_str());
}

}  // namespace hostccl
