#include "algorithms/halving_doubling/halving_doubling_gathers.h"

#include <cstring>

#include "algorithms/halving_doubling/phases.h"

namespace hostccl {

HcclResult HalvingReduceScatter::run(Context& ctx) const {
    const CollArgs& a = ctx.args();
    const uint32_t r = ctx.rank();
    const size_t es = ctx.elemSize();
    const BlockLayout blocks = layoutFrom(a.sendCounts, a.sendDispls);
    const size_t total = layoutEnd(blocks) * es, ownBytes = blocks[r].count * es;
    char* out = static_cast<char*>(a.recvBuf);
    // Work on a copy: the input must not change, and the output may alias it.
    char* work = ctx.scratch(total);
    if (total > 0) ctx.copy(work, a.sendBuf, total);
    const Fold fold(ctx.size(), r);
    if (fold.sitsOut()) {
        ctx.send(r + 1, work, total);
        ctx.recv(r + 1, out, ownBytes);
        return ctx.waitAll();
    }
    if (fold.absorbs()) {
        ctx.recvReduce(r - 1, work, work, total);
        HOSTCCL_CHECK(ctx.waitAll());
    }
    HOSTCCL_CHECK(halvingReduceScatter(ctx, fold, work, virtualBlocks(fold, blocks)));
    if (fold.absorbs()) ctx.send(r - 1, work + blocks[r - 1].offset * es, blocks[r - 1].count * es);
    if (ownBytes > 0) ctx.copy(out, work + blocks[r].offset * es, ownBytes);
    return ctx.waitAll();
}

HcclResult DoublingAllGather::run(Context& ctx) const {
    const CollArgs& a = ctx.args();
    const uint32_t r = ctx.rank();
    const size_t es = ctx.elemSize();
    const BlockLayout blocks = layoutFrom(a.recvCounts, a.recvDispls);
    const size_t total = layoutEnd(blocks) * es;
    char* out = static_cast<char*>(a.recvBuf);
    char* own = out + blocks[r].offset * es;
    if (a.sendBuf != own) ctx.copy(own, a.sendBuf, blocks[r].count * es);
    const Fold fold(ctx.size(), r);
    if (fold.sitsOut()) {
        ctx.send(r + 1, own, blocks[r].count * es);
        ctx.recv(r + 1, out, total);  // sent only after our block arrived
        return ctx.waitAll();
    }
    if (fold.absorbs()) {
        ctx.recv(r - 1, out + blocks[r - 1].offset * es, blocks[r - 1].count * es);
        HOSTCCL_CHECK(ctx.waitAll());
    }
    HOSTCCL_CHECK(doublingAllGather(ctx, fold, out, virtualBlocks(fold, blocks)));
    return foldOut(ctx, fold, out, total);
}

// n: the whole input, first copied to scratch. The folded rank hands over everything
// and gets its block back.
Linear HalvingReduceScatter::cost(const CostModel& model) const {
    const uint32_t n = model.ranks();
    return model.copy(1.0) + model.reducingStep(foldPairs(n), 1.0) + halvingCost(model) +
           model.step(foldPairs(n), 1.0 / n);
}

// n: the whole output. The folded rank sends its block and gets everything back.
Linear DoublingAllGather::cost(const CostModel& model) const {
    const uint32_t n = model.ranks();
    return model.step(foldPairs(n), 1.0 / n) + doublingCost(model) + model.step(foldPairs(n), 1.0);
}

}  // namespace hostccl
