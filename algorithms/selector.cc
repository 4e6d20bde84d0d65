#include "algorithms/selector.h"

#include <cstdint>

#include "algorithms/direct/direct_algorithms.h"
#include "algorithms/dissemination/barrier.h"
#include "algorithms/halving_doubling/recursive_doubling.h"
#include "algorithms/linear/scatter.h"
#include "algorithms/p2p/send_recv.h"
#include "algorithms/pairwise/alltoallv.h"
#include "algorithms/ring/ring_algorithms.h"
#include "algorithms/tree/binomial.h"
#include "common/env.h"

namespace hostccl {

namespace {
// Until the cost-model selector (issue 4): whole-vector exchanges win while the
// latency term dominates; above this the ring's bandwidth term does.
constexpr size_t kRecursiveDoublingMaxBytes = 32 * 1024;

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

// Ranks that all share memory read and write each other's buffers directly once
// the payload outweighs the two handshakes that costs.
bool useDirect(const Context& ctx) {
    static const uint64_t minBytes = static_cast<uint64_t>(env::getInt("HOSTCCL_DIRECT_MIN_BYTES", -1, INT64_MAX));
    return ctx.sharedMemoryMesh() && minBytes != UINT64_MAX && opBytes(ctx) >= minBytes;
}
}  // namespace

const Algorithm& selectAlgorithm(const Context& ctx) {
    static const RingAllReduce ringAllReduce;
    static const RecursiveDoublingAllReduce recursiveDoubling;
    static const RingAllGather ringAllGather;
    static const RingReduceScatter ringReduceScatter;
    static const BinomialBroadcast binomialBroadcast;
    static const BinomialReduce binomialReduce;
    static const LinearScatter linearScatter;
    static const PairwiseAlltoAllV pairwiseAlltoAll;
    static const DisseminationBarrier barrier;
    static const PointToPoint p2p;
    static const DirectAllReduce directAllReduce(ringAllReduce);
    static const DirectAllGather directAllGather(ringAllGather);
    static const DirectReduceScatter directReduceScatter(ringReduceScatter);
    static const DirectBroadcast directBroadcast(binomialBroadcast);
    static const DirectReduce directReduce(binomialReduce);
    static const DirectAlltoAllV directAlltoAll(pairwiseAlltoAll);
    const bool direct = useDirect(ctx);
    switch (ctx.args().type) {
        case CollType::AllReduce:
            if (direct) return directAllReduce;
            if (ctx.args().count * ctx.elemSize() <= kRecursiveDoublingMaxBytes) return recursiveDoubling;
            return ringAllReduce;
        case CollType::AllGather:
        case CollType::AllGatherV: return direct ? static_cast<const Algorithm&>(directAllGather) : ringAllGather;
        case CollType::ReduceScatter:
        case CollType::ReduceScatterV:
            return direct ? static_cast<const Algorithm&>(directReduceScatter) : ringReduceScatter;
        case CollType::Broadcast: return direct ? static_cast<const Algorithm&>(directBroadcast) : binomialBroadcast;
        case CollType::Reduce: return direct ? static_cast<const Algorithm&>(directReduce) : binomialReduce;
        case CollType::Scatter: return linearScatter;
        case CollType::AlltoAll:
        case CollType::AlltoAllV:
        case CollType::AlltoAllVC: return direct ? static_cast<const Algorithm&>(directAlltoAll) : pairwiseAlltoAll;
        case CollType::Barrier: return barrier;
        case CollType::Send:
        case CollType::Recv:
        case CollType::BatchSendRecv: return p2p;
    }
    return barrier;  // unreachable: every CollType is listed
}

}  // namespace hostccl
