#include "algorithms/tree/binomial.h"

#include <cstring>

namespace hostccl {

namespace {
uint32_t toReal(uint32_t virt, uint32_t root, uint32_t n) { return (virt + root) % n; }
}  // namespace

HcclResult BinomialBroadcast::run(Context& ctx) const {
    const CollArgs& a = ctx.args();
    const uint32_t n = ctx.size(), root = a.root;
    const uint32_t v = (ctx.rank() + n - root) % n;
    const size_t bytes = a.count * ctx.elemSize();
    char* buf = static_cast<char*>(a.recvBuf);
    uint32_t mask = 1;
    while (mask < n) {  // find the parent: the lowest set bit of v
        if (v & mask) {
            ctx.recv(toReal(v - mask, root, n), buf, bytes);
            HOSTCCL_CHECK(ctx.waitAll());
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (v + mask < n) ctx.send(toReal(v + mask, root, n), buf, bytes);
    return ctx.waitAll();
}

HcclResult BinomialReduce::run(Context& ctx) const {
    const CollArgs& a = ctx.args();
    const uint32_t n = ctx.size(), root = a.root;
    const uint32_t v = (ctx.rank() + n - root) % n;
    const size_t bytes = a.count * ctx.elemSize();
    const char* in = static_cast<const char*>(a.sendBuf);
    // The root accumulates in its receive buffer, inner ranks in scratch.
    char* acc = ctx.rank() == root ? static_cast<char*>(a.recvBuf) : nullptr;
    const char* partial = in;  // what this rank holds so far
    for (uint32_t mask = 1; mask < n; mask <<= 1) {
        if (v & mask) {
            ctx.send(toReal(v - mask, root, n), partial, bytes);
            return ctx.waitAll();
        }
        if (v + mask < n) {
            if (acc == nullptr) acc = ctx.scratch(bytes);
            ctx.recvReduce(toReal(v + mask, root, n), acc, partial, bytes);
            HOSTCCL_CHECK(ctx.waitAll());
            partial = acc;
        }
    }
    // Only the root gets here; with no children its result is its own input.
    if (partial != acc && bytes > 0) std::memmove(acc, in, bytes);
    return HCCL_SUCCESS;
}

}  // namespace hostccl
