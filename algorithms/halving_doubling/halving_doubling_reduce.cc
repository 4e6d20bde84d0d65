#include "algorithms/halving_doubling/halving_doubling_reduce.h"

#include <cstring>

#include "algorithms/halving_doubling/phases.h"

namespace hostccl {

namespace {
// Virtual blocks [first, first + n) of `buf` as one byte range.
void span(const BlockLayout& vb, uint32_t first, uint32_t n, size_t es, size_t* offset, size_t* bytes) {
    *offset = vb[first].offset * es;
    *bytes = (vb[first + n - 1].offset + vb[first + n - 1].count - vb[first].offset) * es;
}

// Binomial gather of the virtual blocks onto virtual rank `vroot`, by distance in
// XOR: at step `mask` a rank whose distance has that bit set sends the aligned run
// of `mask` blocks it has collected (always contiguous) and is done.
HcclResult gatherBlocks(Context& ctx, const Fold& fold, uint32_t vroot, char* buf, const BlockLayout& vb) {
    const size_t es = ctx.elemSize();
    const uint32_t v = fold.virtualRank();
    for (uint32_t mask = 1; mask < fold.p2; mask <<= 1) {
        const uint32_t partner = v ^ mask;
        size_t off = 0, bytes = 0;
        if ((v ^ vroot) & mask) {
            span(vb, v & ~(mask - 1), mask, es, &off, &bytes);
            ctx.send(fold.realRank(partner), buf + off, bytes);
            return ctx.waitAll();
        }
        span(vb, partner & ~(mask - 1), mask, es, &off, &bytes);
        ctx.recv(fold.realRank(partner), buf + off, bytes);
        HOSTCCL_CHECK(ctx.waitAll());
    }
    return HCCL_SUCCESS;
}
}  // namespace

HcclResult HalvingDoublingReduce::run(Context& ctx) const {
    const CollArgs& a = ctx.args();
    const uint32_t n = ctx.size(), r = ctx.rank(), root = a.root;
    const size_t bytes = a.count * ctx.elemSize();
    const Fold fold(n, r);
    const bool rootSetAside = Fold(n, root).sitsOut();
    const uint32_t gatherer = rootSetAside ? root + 1 : root;  // the survivor that ends with the result
    if (fold.sitsOut()) {
        ctx.send(r + 1, a.sendBuf, bytes);
        if (r == root) ctx.recv(r + 1, a.recvBuf, bytes);
        return ctx.waitAll();
    }
    char* work = r == root ? static_cast<char*>(a.recvBuf) : ctx.scratch(bytes);
    if (work != a.sendBuf && bytes > 0) ctx.copy(work, a.sendBuf, bytes);
    if (fold.absorbs()) {
        ctx.recvReduce(r - 1, work, work, bytes);
        HOSTCCL_CHECK(ctx.waitAll());
    }
    const BlockLayout vb = evenBlocks(a.count, fold.p2);
    HOSTCCL_CHECK(halvingReduceScatter(ctx, fold, work, vb));
    HOSTCCL_CHECK(gatherBlocks(ctx, fold, Fold(n, gatherer).virtualRank(), work, vb));
    if (r == gatherer && rootSetAside) ctx.send(root, work, bytes);
    return ctx.waitAll();
}

// Root 0 (never set aside): the fold's hand-over, the halving, then a gather whose
// step `mask` moves mask/p2 of the vector.
Linear HalvingDoublingReduce::cost(const CostModel& model) const {
    const uint32_t n = model.ranks(), p2 = Fold(n, 0).p2;
    Linear c = model.reducingStep(foldPairs(n), 1.0) + halvingCost(model);
    for (uint32_t mask = 1; mask < p2; mask <<= 1)
        c += model.step(
            [n, mask](uint32_t r) {
                const Fold f(n, r);
                return !f.sitsOut() && (f.virtualRank() & (2 * mask - 1)) == mask ? f.realRank(f.virtualRank() ^ mask)
                                                                                   : CostModel::kNone;
            },
            double(mask) / p2);
    return c;
}

}  // namespace hostccl
