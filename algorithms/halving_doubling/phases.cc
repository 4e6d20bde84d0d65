#include "algorithms/halving_doubling/phases.h"

namespace hostccl {

namespace {
struct Span {
    size_t offset;
    size_t bytes;
};
// Virtual blocks [first, first + n) as one byte range.
Span spanOf(const BlockLayout& blocks, uint32_t first, uint32_t n, size_t es) {
    const Block& last = blocks[first + n - 1];
    return Span{blocks[first].offset * es, (last.offset + last.count - blocks[first].offset) * es};
}
}  // namespace

HcclResult halvingReduceScatter(Context& ctx, const Fold& fold, char* buf, const BlockLayout& vblocks) {
    const size_t es = ctx.elemSize();
    const uint32_t v = fold.virtualRank();
    uint32_t first = 0, width = fold.p2;
    for (uint32_t mask = fold.p2 / 2; mask > 0; mask /= 2) {
        width /= 2;
        const uint32_t keep = (v & mask) ? first + width : first, give = (v & mask) ? first : first + width;
        const Span k = spanOf(vblocks, keep, width, es), g = spanOf(vblocks, give, width, es);
        const uint32_t partner = fold.realRank(v ^ mask);
        ctx.send(partner, buf + g.offset, g.bytes);
        ctx.recvReduce(partner, buf + k.offset, buf + k.offset, k.bytes);
        HOSTCCL_CHECK(ctx.waitAll());
        first = keep;
    }
    return HCCL_SUCCESS;
}

HcclResult doublingAllGather(Context& ctx, const Fold& fold, char* buf, const BlockLayout& vblocks) {
    const size_t es = ctx.elemSize();
    const uint32_t v = fold.virtualRank();
    for (uint32_t mask = 1; mask < fold.p2; mask *= 2) {
        const uint32_t mine = v & ~(mask - 1), theirs = (v ^ mask) & ~(mask - 1);
        const Span m = spanOf(vblocks, mine, mask, es), t = spanOf(vblocks, theirs, mask, es);
        const uint32_t partner = fold.realRank(v ^ mask);
        ctx.send(partner, buf + m.offset, m.bytes);
        ctx.recv(partner, buf + t.offset, t.bytes);
        HOSTCCL_CHECK(ctx.waitAll());
    }
    return HCCL_SUCCESS;
}

BlockLayout virtualBlocks(const Fold& fold, const BlockLayout& realBlocks) {
    if (fold.extra == 0) return realBlocks;  // every rank is its own virtual rank
    BlockLayout vb(fold.p2);
    for (uint32_t v = 0; v < fold.p2; ++v) {
        Block head = realBlocks[v < fold.extra ? 2 * v : v + fold.extra];
        if (v < fold.extra) head.count += realBlocks[2 * v + 1].count;
        vb.set(v, head);
    }
    return vb;
}

bool packedInRankOrder(const BlockLayout& b) {
    uint64_t next = 0;
    for (const Block& x : b) {
        if (x.offset != next) return false;
        next += x.count;
    }
    return true;
}

BlockLayout packedLayoutOf(const BlockLayout& b) {
    BlockLayout out(b.size());
    uint64_t next = 0;
    for (size_t i = 0; i < b.size(); ++i) {
        out.set(i, Block{next, b[i].count});
        next += b[i].count;
    }
    return out;
}

void copyBlocks(Context& ctx, char* to, const BlockLayout& toBlocks, const char* from, const BlockLayout& fromBlocks) {
    const size_t es = ctx.elemSize();
    for (size_t i = 0; i < toBlocks.size(); ++i)
        if (toBlocks[i].count > 0)
            ctx.copy(to + toBlocks[i].offset * es, from + fromBlocks[i].offset * es, toBlocks[i].count * es);
}

Linear halvingCost(const CostModel& model) {
    const uint32_t n = model.ranks(), p2 = Fold(n, 0).p2;
    Linear c;
    for (uint32_t mask = p2 / 2; mask > 0; mask /= 2)
        c += model.reducingStep(acrossBit(n, mask), double(mask) / p2);
    return c;
}

Linear doublingCost(const CostModel& model) {
    const uint32_t n = model.ranks(), p2 = Fold(n, 0).p2;
    Linear c;
    for (uint32_t mask = 1; mask < p2; mask *= 2) c += model.step(acrossBit(n, mask), double(mask) / p2);
    return c;
}

}  // namespace hostccl
