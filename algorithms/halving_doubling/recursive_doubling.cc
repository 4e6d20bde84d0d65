#include "algorithms/halving_doubling/recursive_doubling.h"

#include <cstring>

#include "algorithms/halving_doubling/fold.h"
#include "algorithms/halving_doubling/phases.h"

namespace hostccl {

HcclResult RecursiveDoublingAllReduce::run(Context& ctx) const {
    const CollArgs& a = ctx.args();
    const uint32_t n = ctx.size(), r = ctx.rank();
    const size_t bytes = a.count * ctx.elemSize();
    char* buf = static_cast<char*>(a.recvBuf);
    if (a.sendBuf != buf && bytes > 0) ctx.copy(buf, a.sendBuf, bytes);
    const Fold fold(n, r);
    bool finished = false;
    HOSTCCL_CHECK(foldIn(ctx, fold, buf, bytes, &finished));
    if (finished) return HCCL_SUCCESS;
    const uint32_t v = fold.virtualRank(), p2 = fold.p2;
    // The partner reads our buffer while we receive, so its data lands in scratch
    // and is reduced once both directions are done.
    char* incoming = ctx.scratch(bytes);
    for (uint32_t mask = 1; mask < p2; mask <<= 1) {
        uint32_t partner = fold.realRank(v ^ mask);
        ctx.send(partner, buf, bytes);
        ctx.recv(partner, incoming, bytes);
        HOSTCCL_CHECK(ctx.waitAll());
        if (bytes > 0) ctx.reduce(buf, buf, incoming, a.count);
    }
    return foldOut(ctx, fold, buf, bytes);
}

// Whole-vector exchanges across each bit, each followed by a reduction (of the
// whole vector, after it has arrived: not overlapped).
Linear RecursiveDoublingAllReduce::cost(const CostModel& model) const {
    const uint32_t n = model.ranks(), p2 = Fold(n, 0).p2;
    Linear c = model.reducingStep(foldPairs(n), 1.0) + model.step(foldPairs(n), 1.0);
    for (uint32_t mask = 1; mask < p2; mask *= 2) c += model.step(acrossBit(n, mask), 1.0) + model.reduce(1.0);
    return c;
}

}  // namespace hostccl
