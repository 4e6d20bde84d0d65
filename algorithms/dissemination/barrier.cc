#include "algorithms/dissemination/barrier.h"

namespace hostccl {

HcclResult DisseminationBarrier::run(Context& ctx) const {
    const uint32_t n = ctx.size(), r = ctx.rank();
    for (uint32_t dist = 1; dist < n; dist <<= 1) {
        ctx.send((r + dist) % n, nullptr, 0);
        ctx.recv((r + n - dist) % n, nullptr, 0);
        HOSTCCL_CHECK(ctx.waitAll());
    }
    return HCCL_SUCCESS;
}

}  // namespace hostccl
