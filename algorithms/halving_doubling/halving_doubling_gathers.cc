#include "algorithms/halving_doubling/halving_doubling_gathers.h"

#include <cstring>

#include "algorithms/halving_doubling/phases.h"

namespace hostccl {

HcclResult HalvingReduceScatter::run(Context& ctx) const {
    const CollArgs& a = ctx.args();
    const uint32_t r = ctx.rank();
    const size_t es = ctx.elemSize();
    // Work on a copy, its blocks packed in rank order: the input must not change, the
    // output may alias it, and the caller's displacements may leave gaps or reorder.
    const BlockLayout given = layoutFrom(a.sendCounts, a.sendDispls);
    const bool packed = packedInRankOrder(given);
    const BlockLayout blocks = packed ? given : packedLayoutOf(given);
    const size_t total = layoutEnd(blocks) * es, ownBytes = blocks[r].count * es;
    char* out = static_cast<char*>(a.recvBuf);
    char* work = ctx.scratch(total);
    if (packed && total > 0) ctx.copy(work, a.sendBuf, total);
    if (!packed) copyBlocks(ctx, work, blocks, static_cast<const char*>(a.sendBuf), given);
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
    // Blocks the caller's displacements do not pack in rank order gather in scratch
    // first and move to their places at the end.
    const BlockLayout given = layoutFrom(a.recvCounts, a.recvDispls);
    const bool packed = packedInRankOrder(given);
    const BlockLayout blocks = packed ? given : packedLayoutOf(given);
    const size_t total = layoutEnd(blocks) * es;
    char* out = packed ? static_cast<char*>(a.recvBuf) : ctx.scratch(total);
    char* own = out + blocks[r].offset * es;
    if (a.sendBuf != own) ctx.copy(own, a.sendBuf, blocks[r].count * es);
    const Fold fold(ctx.size(), r);
    if (fold.sitsOut()) {
        ctx.send(r + 1, own, blocks[r].count * es);
        ctx.recv(r + 1, out, total);  // sent only after our block arrived
        HOSTCCL_CHECK(ctx.waitAll());
    } else {
        if (fold.absorbs()) {
            ctx.recv(r - 1, out + blocks[r - 1].offset * es, blocks[r - 1].count * es);
            HOSTCCL_CHECK(ctx.waitAll());
        }
        HOSTCCL_CHECK(doublingAllGather(ctx, fold, out, virtualBlocks(fold, blocks)));
        HOSTCCL_CHECK(foldOut(ctx, fold, out, total));
    }
    if (!packed) copyBlocks(ctx, static_cast<char*>(a.recvBuf), given, out, blocks);
    return HCCL_SUCCESS;
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
