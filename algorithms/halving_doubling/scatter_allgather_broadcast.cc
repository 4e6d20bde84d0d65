#include "algorithms/halving_doubling/scatter_allgather_broadcast.h"

#include <algorithm>

#include "algorithms/rank_group.h"
#include "algorithms/ring/ring.h"
#include "algorithms/tree/binomial.h"

namespace hostccl {

HcclResult ScatterAllGatherBroadcast::run(Context& ctx) const {
    const CollArgs& a = ctx.args();
    const uint32_t n = ctx.size(), root = a.root;
    const uint32_t v = (ctx.rank() + n - root) % n;  // rank relative to the root
    const size_t es = ctx.elemSize();
    char* buf = static_cast<char*>(a.recvBuf);
    const BlockLayout blocks = evenBlocks(a.count, n);  // block i goes to relative rank i
    auto real = [&](uint32_t rel) { return (rel + root) % n; };
    // Blocks [first, last) as one byte range of `buf`.
    auto range = [&](uint32_t first, uint32_t last, char** at, size_t* bytes) {
        *at = buf + blocks[first].offset * es;
        *bytes = (blocks[last - 1].offset + blocks[last - 1].count - blocks[first].offset) * es;
    };
    char* at = nullptr;
    size_t bytes = 0;
    uint32_t mask = 1;
    for (; mask < n; mask <<= 1) {  // the parent is v without its lowest set bit
        if (v & mask) {
            range(v, std::min(v + mask, n), &at, &bytes);
            ctx.recv(real(v - mask), at, bytes);
            HOSTCCL_CHECK(ctx.waitAll());
            break;
        }
    }
    for (mask >>= 1; mask > 0; mask >>= 1) {  // hand each child its subtree's blocks
        if (v + mask >= n) continue;
        range(v + mask, std::min(v + 2 * mask, n), &at, &bytes);
        ctx.send(real(v + mask), at, bytes);
    }
    HOSTCCL_CHECK(ctx.waitAll());
    RankGroup fromRoot;
    for (uint32_t i = 0; i < n; ++i) fromRoot.ranks.push_back(real(i));
    fromRoot.index = v;
    return ringAllGather(ctx, fromRoot, blocks, buf);
}

// A binomial scatter (half, a quarter, ... of the vector down the tree), then a ring
// allgather.
Linear ScatterAllGatherBroadcast::cost(const CostModel& model) const {
    const uint32_t n = model.ranks();
    uint32_t top = 1;
    while (top < n) top <<= 1;
    Linear c;
    for (uint32_t mask = top >> 1; mask > 0; mask >>= 1)
        c += model.step(binomialChild(n, mask), double(mask) / n);
    return c + ringPassCost(model, false);
}

}  // namespace hostccl
