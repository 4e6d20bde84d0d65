#include "algorithms/bruck/bruck_alltoall.h"

#include <cstring>

namespace hostccl {

namespace {
// How many of the slots 0..n-1 have `bit` set.
uint32_t slotsWithBit(uint32_t n, uint32_t bit) {
    uint32_t k = 0;
    for (uint32_t i = 0; i < n; ++i) k += (i & bit) ? 1 : 0;
    return k;
}
}  // namespace

HcclResult BruckAlltoAll::run(Context& ctx) const {
    const CollArgs& a = ctx.args();
    const uint32_t n = ctx.size(), r = ctx.rank();
    const size_t block = a.sendCounts[r] * ctx.elemSize();  // equal for every pair
    const char* in = static_cast<const char*>(a.sendBuf);
    // Scratch: the n slots, then the outgoing and incoming packs of one step.
    const size_t packBytes = size_t(n / 2 + 1) * block;
    char* slots = ctx.scratch(size_t(n) * block + 2 * packBytes);
    char* outPack = slots + size_t(n) * block;
    char* inPack = outPack + packBytes;
    for (uint32_t i = 0; i < n && block > 0; ++i) ctx.copy(slots + i * block, in + ((r + i) % n) * block, block);
    for (uint32_t bit = 1; bit < n; bit <<= 1) {
        size_t packed = 0;
        for (uint32_t i = 0; i < n; ++i)
            if ((i & bit) && block > 0) ctx.copy(outPack + (packed++) * block, slots + i * block, block);
        const size_t bytes = size_t(slotsWithBit(n, bit)) * block;
        ctx.send((r + bit) % n, outPack, bytes);
        ctx.recv((r + n - bit) % n, inPack, bytes);
        HOSTCCL_CHECK(ctx.waitAll());
        packed = 0;
        for (uint32_t i = 0; i < n; ++i)
            if ((i & bit) && block > 0) ctx.copy(slots + i * block, inPack + (packed++) * block, block);
    }
    char* out = static_cast<char*>(a.recvBuf);
    for (uint32_t i = 0; i < n && block > 0; ++i) ctx.copy(out + ((r + n - i) % n) * block, slots + i * block, block);
    return HCCL_SUCCESS;
}

// n: a rank's whole send buffer. Two rotations, and per step a pack, the message
// and an unpack of the slots with that bit.
Linear BruckAlltoAll::cost(const CostModel& model) const {
    const uint32_t n = model.ranks();
    Linear c = model.copy(2.0);
    for (uint32_t bit = 1; bit < n; bit <<= 1) {
        const double share = double(slotsWithBit(n, bit)) / n;
        c += model.step([n, bit](uint32_t r) { return (r + bit) % n; }, share) + model.copy(2 * share);
    }
    return c;
}

}  // namespace hostccl
