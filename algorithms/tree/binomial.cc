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
    if (partial != acc && bytes > 0) ctx.copy(acc, in, bytes);
    return HCCL_SUCCESS;
}

CostModel::Partner binomialChild(uint32_t n, uint32_t mask) {
    return [n, mask](uint32_t r) { return r % (2 * mask) == 0 && r + mask < n ? r + mask : CostModel::kNone; };
}

namespace {
// ceil(lg n) rounds of the whole vector down (or up) the tree rooted at rank 0.
Linear treeCost(const CostModel& model, bool reduces) {
    const uint32_t n = model.ranks();
    Linear c;
    for (uint32_t mask = 1; mask < n; mask <<= 1) {
        c += reduces ? model.reducingStep(binomialChild(n, mask), 1.0) : model.step(binomialChild(n, mask), 1.0);
    }
    return c;
}
}  // namespace

Linear BinomialBroadcast::cost(const CostModel& model) const { return treeCost(model, false); }

Linear BinomialReduce::cost(const CostModel& model) const { return treeCost(model, true); }

}  // namespace hostccl
