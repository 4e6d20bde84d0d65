#include "algorithms/bruck/bruck_allgather.h"

#include <algorithm>
#include <cstring>

namespace hostccl {

HcclResult BruckAllGather::run(Context& ctx) const {
    const CollArgs& a = ctx.args();
    const uint32_t n = ctx.size(), r = ctx.rank();
    const size_t block = a.recvCounts[r] * ctx.elemSize();  // equal for every rank
    // Slot i of `gathered` holds rank (r + i) % n's block.
    char* gathered = ctx.scratch(block * n);
    if (block > 0) ctx.copy(gathered, a.sendBuf, block);
    for (uint32_t dist = 1; dist < n; dist *= 2) {
        const uint32_t blocks = dist < n - dist ? dist : n - dist;
        ctx.send((r + n - dist) % n, gathered, blocks * block);
        ctx.recv((r + dist) % n, gathered + dist * block, blocks * block);
        HOSTCCL_CHECK(ctx.waitAll());
    }
    char* out = static_cast<char*>(a.recvBuf);
    const size_t head = (n - r) * block;  // slots of ranks r .. n-1
    if (block > 0) {
        ctx.copy(out + r * block, gathered, head);
        ctx.copy(out, gathered + head, r * block);
    }
    return HCCL_SUCCESS;
}

// ceil(lg n) steps, step k moving min(2^k, n - 2^k) blocks, then one rotation.
Linear BruckAllGather::cost(const CostModel& model) const {
    const uint32_t n = model.ranks();
    Linear c = model.copy(1.0);
    for (uint32_t dist = 1; dist < n; dist *= 2)
        c += model.step([n, dist](uint32_t r) { return (r + n - dist) % n; }, double(std::min(dist, n - dist)) / n);
    return c;
}

}  // namespace hostccl
