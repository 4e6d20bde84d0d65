#include "algorithms/ring/ring.h"

#include <cstring>

namespace hostccl {

namespace {
uint32_t mod(int64_t x, uint32_t n) { return static_cast<uint32_t>(((x % n) + n) % n); }
}  // namespace

HcclResult ringReduceScatter(Context& ctx, const RankGroup& group, const BlockLayout& blocks, const char* in, char* full,
                             char* out) {
    const uint32_t n = group.size(), r = group.index;
    const size_t es = ctx.elemSize();
    const uint32_t next = group.next(), prev = group.prev();
    char* stage[2] = {nullptr, nullptr};
    if (full == nullptr && n > 2) {
        size_t bytes = maxBlockCount(blocks) * es;
        char* s = ctx.scratch(2 * bytes);
        stage[0] = s;
        stage[1] = s + bytes;
    }
    auto at = [&](const char* base, uint32_t blk) { return base + blocks[blk].offset * es; };
    auto bytesOf = [&](uint32_t blk) { return blocks[blk].count * es; };
    if (n == 1) {
        ctx.copy(out, at(in, 0), bytesOf(0));
        return HCCL_SUCCESS;
    }

    // Step s sends block r-s-1 and receives block r-s-2, so the last step
    // delivers block r. Partial sums from step s are what step s+1 sends.
    const char* lastReceived = nullptr;
    for (uint32_t s = 0; s + 1 < n; ++s) {
        uint32_t sendBlk = mod(int64_t(r) - s - 1, n), recvBlk = mod(int64_t(r) - s - 2, n);
        const char* src = s == 0 ? at(in, sendBlk) : lastReceived;
        char* dst;
        if (s + 2 == n)
            dst = out;
        else if (full != nullptr)
            dst = full + blocks[recvBlk].offset * es;
        else
            dst = stage[s % 2];
        ctx.send(next, src, bytesOf(sendBlk));
        ctx.recvReduce(prev, dst, at(in, recvBlk), bytesOf(recvBlk));
        HOSTCCL_CHECK(ctx.waitAll());
        lastReceived = dst;
    }
    return HCCL_SUCCESS;
}

HcclResult ringAllGather(Context& ctx, const RankGroup& group, const BlockLayout& blocks, char* buf, const char* own) {
    const uint32_t n = group.size(), r = group.index;
    const size_t es = ctx.elemSize();
    const uint32_t next = group.next(), prev = group.prev();
    char* ownSlot = buf + blocks[r].offset * es;
    const size_t ownBytes = blocks[r].count * es;
    for (uint32_t s = 0; s + 1 < n; ++s) {
        uint32_t sendBlk = mod(int64_t(r) - s, n), recvBlk = mod(int64_t(r) - s - 1, n);
        const bool fromOwn = s == 0 && own != nullptr;
        ctx.send(next, fromOwn ? own : buf + blocks[sendBlk].offset * es, blocks[sendBlk].count * es);
        ctx.recv(prev, buf + blocks[recvBlk].offset * es, blocks[recvBlk].count * es);
        if (fromOwn) ctx.copy(ownSlot, own, ownBytes);
        HOSTCCL_CHECK(ctx.waitAll());
    }
    if (n == 1 && own != nullptr) ctx.copy(ownSlot, own, ownBytes);
    return HCCL_SUCCESS;
}

Linear ringPassCost(const CostModel& model, bool reduces) {
    const uint32_t n = model.ranks();
    if (n < 2) return {};
    auto next = [n](uint32_t r) { return (r + 1) % n; };
    return double(n - 1) * (reduces ? model.reducingRingStep(next, 1.0 / n) : model.ringStep(next, 1.0 / n));
}

}  // namespace hostccl
