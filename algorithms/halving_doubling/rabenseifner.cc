#include "algorithms/halving_doubling/rabenseifner.h"

#include <cstring>

#include "algorithms/blocks.h"
#include "algorithms/halving_doubling/fold.h"

namespace hostccl {

namespace {
// Blocks [first, first + n) of `blocks` as one byte range.
struct Span {
    size_t offset;
    size_t bytes;
};
Span spanOf(const BlockLayout& blocks, uint32_t first, uint32_t n, size_t es) {
    const Block& last = blocks[first + n - 1];
    return Span{blocks[first].offset * es, (last.offset + last.count - blocks[first].offset) * es};
}
}  // namespace

HcclResult RabenseifnerAllReduce::run(Context& ctx) const {
    const CollArgs& a = ctx.args();
    const uint32_t r = ctx.rank();
    const size_t es = ctx.elemSize(), bytes = a.count * es;
    char* buf = static_cast<char*>(a.recvBuf);
    if (a.sendBuf != buf && bytes > 0) std::memmove(buf, a.sendBuf, bytes);
    const Fold fold(ctx.size(), r);
    bool finished = false;
    HOSTCCL_CHECK(foldIn(ctx, fold, buf, bytes, &finished));
    if (finished) return HCCL_SUCCESS;
    const uint32_t v = fold.virtualRank(), p2 = fold.p2;
    const BlockLayout blocks = evenBlocks(a.count, p2);  // block i ends on virtual rank i

    // Recursive halving: keep the half of the current range on this rank's side of
    // `mask`, send the other half to the partner, reduce what it sends for ours.
    uint32_t first = 0, width = p2;
    for (uint32_t mask = p2 / 2; mask > 0; mask /= 2) {
        const uint32_t partner = fold.realRank(v ^ mask);
        width /= 2;
        const uint32_t keep = (v & mask) ? first + width : first, give = (v & mask) ? first : first + width;
        const Span k = spanOf(blocks, keep, width, es), g = spanOf(blocks, give, width, es);
        ctx.send(partner, buf + g.offset, g.bytes);
        ctx.recvReduce(partner, buf + k.offset, buf + k.offset, k.bytes);
        HOSTCCL_CHECK(ctx.waitAll());
        first = keep;
    }
    // Recursive doubling: swap whole reduced ranges with partners ever further away.
    for (uint32_t mask = 1; mask < p2; mask *= 2) {
        const uint32_t partner = fold.realRank(v ^ mask);
        const uint32_t mine = v & ~(mask - 1), theirs = (v ^ mask) & ~(mask - 1);
        const Span m = spanOf(blocks, mine, mask, es), t = spanOf(blocks, theirs, mask, es);
        ctx.send(partner, buf + m.offset, m.bytes);
        ctx.recv(partner, buf + t.offset, t.bytes);
        HOSTCCL_CHECK(ctx.waitAll());
    }
    return foldOut(ctx, fold, buf, bytes);
}

}  // namespace hostccl
