#include "algorithms/selector.h"

#include <atomic>
#include <cstdint>

#include "algorithms/bruck/bruck_allgather.h"
#include "algorithms/direct/direct_algorithms.h"
#include "algorithms/dissemination/barrier.h"
#include "algorithms/halving_doubling/halving_doubling_gathers.h"
#include "algorithms/halving_doubling/phases.h"
#include "algorithms/halving_doubling/rabenseifner.h"
#include "algorithms/halving_doubling/scatter_allgather_broadcast.h"
#include "algorithms/hierarchical/hierarchical_allreduce.h"
#include "algorithms/halving_doubling/recursive_doubling.h"
#include "algorithms/linear/scatter.h"
#include "algorithms/p2p/send_recv.h"
#include "algorithms/pairwise/alltoallv.h"
#include "algorithms/ring/ring_algorithms.h"
#include "algorithms/tree/binomial.h"
#include "common/env.h"

namespace hostccl {

namespace {
// Whole-vector exchanges win while the latency term dominates; above this the
// ring's bandwidth term does.
constexpr size_t kRecursiveDoublingMaxBytes = 32 * 1024;

// Every algorithm, once (declaration order: the direct ones name their fallbacks).
struct Algorithms {
    RingAllReduce ringAllReduce;
    RecursiveDoublingAllReduce recursiveDoubling;
    RabenseifnerAllReduce rabenseifner;
    HalvingReduceScatter halvingReduceScatter;
    DoublingAllGather doublingAllGather;
    BruckAllGather bruckAllGather;
    ScatterAllGatherBroadcast scatterAllGatherBroadcast;
    HierarchicalAllReduce hierarchicalAllReduce;
    RingAllGather ringAllGather;
    RingReduceScatter ringReduceScatter;
    BinomialBroadcast binomialBroadcast;
    BinomialReduce binomialReduce;
    LinearScatter linearScatter;
    PairwiseAlltoAllV pairwiseAlltoAll;
    DisseminationBarrier barrier;
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

uint64_t sum(const std::vector<uint64_t>& v) {
    uint64_t s = 0;
    for (uint64_t x : v) s += x;
    return s;
}

// The bytes the op moves per rank, which is what decides between algorithms.
uint64_t opBytes(const Context& ctx) {
    const CollArgs& a = ctx.args();
    switch (a.type) {
        case CollType::AllGather:
        case CollType::AllGatherV: return sum(a.recvCounts) * ctx.elemSize();
        case CollType::ReduceScatter:
        case CollType::ReduceScatterV:
        case CollType::AlltoAll:
        case CollType::AlltoAllV:
        case CollType::AlltoAllVC: return sum(a.sendCounts) * ctx.elemSize();
        default: return a.count * ctx.elemSize();
    }
}

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

// What HCCL_ALGO's family means for this op here; nullptr when hostccl has no such
// algorithm for it (or, for direct, the ranks do not share one host).
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
            if (op == AlgoOp::AllGather && packedInRankOrder(layoutFrom(ctx.args().recvCounts, ctx.args().recvDispls)))
                return &a.doublingAllGather;
            if (op == AlgoOp::ReduceScatter &&
                packedInRankOrder(layoutFrom(ctx.args().sendCounts, ctx.args().sendDispls)))
                return &a.halvingReduceScatter;
            return nullptr;
        case AlgoFamily::Hierarchical: return op == AlgoOp::AllReduce ? &a.hierarchicalAllReduce : nullptr;
        case AlgoFamily::Bruck: return ctx.args().type == CollType::AllGather ? &a.bruckAllGather : nullptr;
        case AlgoFamily::Pairwise: return op == AlgoOp::AlltoAll ? &a.pairwiseAlltoAll : nullptr;
        case AlgoFamily::Direct: return ctx.sharedMemoryMesh() ? directFor(ctx.args().type) : nullptr;
        default: return nullptr;
    }
}

// Once per process and (op, family): the override cannot be honoured for this op.
void noteUnhonoured(const Context& ctx, AlgoFamily family) {
    static std::atomic<uint64_t> told{0};
    const uint64_t bit = uint64_t(1) << (size_t(algoOpOf(ctx.args().type)) * 8 + size_t(family));
    if (told.fetch_or(bit) & bit) return;
    log::warn("HCCL_ALGO asks for {} for {}, which hostccl cannot run for this call (no such algorithm for the "
              "operator, V blocks not packed in rank order, or, for direct, ranks on several hosts); using the "
              "adaptive choice (reported once)",
              familyName(family), collName(ctx.args().type));
}

// Ranks that all share memory read and write each other's buffers directly once
// the payload outweighs the two handshakes that costs.
bool useDirect(const Context& ctx) {
    static const uint64_t minBytes = static_cast<uint64_t>(env::getInt("HOSTCCL_DIRECT_MIN_BYTES", -1, INT64_MAX));
    return ctx.sharedMemoryMesh() && minBytes != UINT64_MAX && opBytes(ctx) >= minBytes;
}

const Algorithm& adaptive(const Context& ctx) {
    const Algorithms& a = all();
    const CollType t = ctx.args().type;
    if (useDirect(ctx))
        if (const Algorithm* d = directFor(t)) return *d;
    switch (t) {
        case CollType::AllReduce:
            return opBytes(ctx) <= kRecursiveDoublingMaxBytes ? static_cast<const Algorithm&>(a.recursiveDoubling)
                                                              : a.ringAllReduce;
        case CollType::AllGather:
        case CollType::AllGatherV: return a.ringAllGather;
        case CollType::ReduceScatter:
        case CollType::ReduceScatterV: return a.ringReduceScatter;
        case CollType::Broadcast: return a.binomialBroadcast;
        case CollType::Reduce: return a.binomialReduce;
        case CollType::Scatter: return a.linearScatter;
        case CollType::AlltoAll:
        case CollType::AlltoAllV:
        case CollType::AlltoAllVC: return a.pairwiseAlltoAll;
        case CollType::Barrier: return a.barrier;
        case CollType::Send:
        case CollType::Recv:
        case CollType::BatchSendRecv: return a.p2p;
    }
    return a.barrier;  // unreachable: every CollType is listed
}
}  // namespace

const Algorithm& selectAlgorithm(const Context& ctx) {
    const AlgoFamily family = ctx.forcedFamily();
    if (family != AlgoFamily::Auto) {
        if (const Algorithm* f = forced(ctx, family)) return *f;
        noteUnhonoured(ctx, family);
    }
    return adaptive(ctx);
}

}  // namespace hostccl
