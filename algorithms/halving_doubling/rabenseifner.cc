#include "algorithms/halving_doubling/rabenseifner.h"

#include <cstring>

#include "algorithms/halving_doubling/phases.h"

namespace hostccl {

HcclResult RabenseifnerAllReduce::run(Context& ctx) const {
    const CollArgs& a = ctx.args();
    const uint32_t r = ctx.rank();
    const size_t es = ctx.elemSize(), bytes = a.count * es;
    char* buf = static_cast<char*>(a.recvBuf);
    if (a.sendBuf != buf && bytes > 0) ctx.copy(buf, a.sendBuf, bytes);
    const Fold fold(ctx.size(), r);
    bool finished = false;
    HOSTCCL_CHECK(foldIn(ctx, fold, buf, bytes, &finished));
    if (finished) return HCCL_SUCCESS;
    const BlockLayout vblocks = evenBlocks(a.count, fold.p2);
    HOSTCCL_CHECK(halvingReduceScatter(ctx, fold, buf, vblocks));
    HOSTCCL_CHECK(doublingAllGather(ctx, fold, buf, vblocks));
    return foldOut(ctx, fold, buf, bytes);
}

// The fold's hand-over and return of the whole vector, then the two phases.
Linear RabenseifnerAllReduce::cost(const CostModel& model) const {
    return model.reducingStep(foldPairs(model.ranks()), 1.0) + halvingCost(model) + doublingCost(model) +
           model.step(foldPairs(model.ranks()), 1.0);
}

}  // namespace hostccl
