#include "algorithms/halving_doubling/fold.h"

namespace hostccl {

HcclResult foldIn(Context& ctx, const Fold& fold, char* buf, size_t bytes, bool* finished) {
    *finished = fold.sitsOut();
    if (fold.sitsOut()) {
        ctx.send(fold.rank + 1, buf, bytes);
        ctx.recv(fold.rank + 1, buf, bytes);  // the result comes only after our vector was read
        return ctx.waitAll();
    }
    if (fold.absorbs()) {
        ctx.recvReduce(fold.rank - 1, buf, buf, bytes);
        return ctx.waitAll();
    }
    return HCCL_SUCCESS;
}

HcclResult foldOut(Context& ctx, const Fold& fold, const char* buf, size_t bytes) {
    if (!fold.absorbs()) return HCCL_SUCCESS;
    ctx.send(fold.rank - 1, buf, bytes);
    return ctx.waitAll();
}

CostModel::Partner foldPairs(uint32_t n) {
    const uint32_t extra = Fold(n, 0).extra;
    return [extra](uint32_t r) { return r < 2 * extra ? r ^ 1u : CostModel::kNone; };
}

CostModel::Partner acrossBit(uint32_t n, uint32_t mask) {
    return [n, mask](uint32_t r) {
        const Fold f(n, r);
        return f.sitsOut() ? CostModel::kNone : f.realRank(f.virtualRank() ^ mask);
    };
}

}  // namespace hostccl
