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

}  // namespace hostccl
