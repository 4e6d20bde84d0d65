#include "algorithms/halving_doubling/recursive_doubling.h"

#include <cstring>

namespace hostccl {

namespace {
uint32_t largestPowerOfTwoAtMost(uint32_t n) {
    uint32_t p = 1;
    while (p * 2 <= n) p *= 2;
    return p;
}
}  // namespace

HcclResult RecursiveDoublingAllReduce::run(Context& ctx) const {
    const CollArgs& a = ctx.args();
    const uint32_t n = ctx.size(), r = ctx.rank();
    const size_t bytes = a.count * ctx.elemSize();
    char* buf = static_cast<char*>(a.recvBuf);
    if (a.sendBuf != buf && bytes > 0) std::memmove(buf, a.sendBuf, bytes);
    const uint32_t p2 = largestPowerOfTwoAtMost(n), extra = n - p2;

    // Fold: even ranks below 2*extra hand their data up and wait for the result.
    if (r < 2 * extra && r % 2 == 0) {
        ctx.send(r + 1, buf, bytes);
        ctx.recv(r + 1, buf, bytes);
        return ctx.waitAll();
    }
    if (r < 2 * extra) {
        ctx.recvReduce(r - 1, buf, buf, bytes);
        HOSTCCL_CHECK(ctx.waitAll());
    }
    const uint32_t v = r < 2 * extra ? r / 2 : r - extra;  // rank among the p2 survivors
    auto realRank = [&](uint32_t virt) { return virt < extra ? virt * 2 + 1 : virt + extra; };
    // The partner reads our buffer while we receive, so its data lands in scratch
    // and is reduced once both directions are done.
    char* incoming = ctx.scratch(bytes);
    for (uint32_t mask = 1; mask < p2; mask <<= 1) {
        uint32_t partner = realRank(v ^ mask);
        ctx.send(partner, buf, bytes);
        ctx.recv(partner, incoming, bytes);
        HOSTCCL_CHECK(ctx.waitAll());
        if (bytes > 0) ctx.reduceFn()(buf, buf, incoming, a.count);
    }
    if (r < 2 * extra) {  // hand the result back down
        ctx.send(r - 1, buf, bytes);
        return ctx.waitAll();
    }
    return HCCL_SUCCESS;
}

}  // namespace hostccl
