#include "algorithms/selector.h"

#include "algorithms/dissemination/barrier.h"
#include "algorithms/halving_doubling/recursive_doubling.h"
#include "algorithms/linear/scatter.h"
#include "algorithms/p2p/send_recv.h"
#include "algorithms/pairwise/alltoallv.h"
#include "algorithms/ring/ring_algorithms.h"
#include "algorithms/tree/binomial.h"

namespace hostccl {

namespace {
// Until the cost-model selector (issue 4): whole-vector exchanges win while the
// latency term dominates; above this the ring's bandwidth term does.
constexpr size_t kRecursiveDoublingMaxBytes = 32 * 1024;
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
    switch (ctx.args().type) {
        case CollType::AllReduce:
            if (ctx.args().count * ctx.elemSize() <= kRecursiveDoublingMaxBytes) return recursiveDoubling;
            return ringAllReduce;
        case CollType::AllGather:
        case CollType::AllGatherV: return ringAllGather;
        case CollType::ReduceScatter:
        case CollType::ReduceScatterV: return ringReduceScatter;
        case CollType::Broadcast: return binomialBroadcast;
        case CollType::Reduce: return binomialReduce;
        case CollType::Scatter: return linearScatter;
        case CollType::AlltoAll:
        case CollType::AlltoAllV:
        case CollType::AlltoAllVC: return pairwiseAlltoAll;
        case CollType::Barrier: return barrier;
        case CollType::Send:
        case CollType::Recv:
        case CollType::BatchSendRecv: return p2p;
    }
    return barrier;  // unreachable: every CollType is listed
}

}  // namespace hostccl
