// Ring AllReduce, AllGather(V) and ReduceScatter(V) over the building blocks in ring.cc.
#include "algorithms/ring/ring_algorithms.h"

#include <cstring>

#include "algorithms/ring/ring.h"

namespace hostccl {

// Reduce-scatter into the receive buffer, then all-gather in place: 2(n-1) steps,
// 2(n-1)/n of the data over each link, all work inside the receive buffer.
HcclResult RingAllReduce::run(Context& ctx) const {
    const CollArgs& a = ctx.args();
    BlockLayout blocks = evenBlocks(a.count, ctx.size());
    const char* in = static_cast<const char*>(a.sendBuf);
    char* buf = static_cast<char*>(a.recvBuf);
    char* mine = buf + blocks[ctx.rank()].offset * ctx.elemSize();
    HOSTCCL_CHECK(ringReduceScatter(ctx, RankGroup::everyone(ctx), blocks, in, buf, mine));
    return ringAllGather(ctx, RankGroup::everyone(ctx), blocks, buf);
}

// Blocks come from the normalised counts/displacements (AllGather: even blocks).
HcclResult RingAllGather::run(Context& ctx) const {
    const CollArgs& a = ctx.args();
    BlockLayout blocks = layoutFrom(a.recvCounts, a.recvDispls);
    const size_t es = ctx.elemSize();
    char* buf = static_cast<char*>(a.recvBuf);
    const Block& own = blocks[ctx.rank()];
    const char* ownSlot = buf + own.offset * es;
    if (a.sendBuf == ownSlot) return ringAllGather(ctx, RankGroup::everyone(ctx), blocks, buf);
    // The send buffer may lie inside the receive buffer (elsewhere than its own slot):
    // then it is copied first (memmove), as a step's receive may overwrite it.
    if (overlaps(a.sendBuf, own.count * es, buf, layoutEnd(blocks) * es)) {
        ctx.copy(buf + own.offset * es, a.sendBuf, own.count * es);
        return ringAllGather(ctx, RankGroup::everyone(ctx), blocks, buf);
    }
    // Else the first step sends the block straight from the send buffer and copies it
    // into its slot while the peer reads it: the copy's lines no longer have to cross
    // to the peer's core (2 ranks, 2 MiB out of place: 190 us, against 30 in place).
    return ringAllGather(ctx, RankGroup::everyone(ctx), blocks, buf, static_cast<const char*>(a.sendBuf));
}

HcclResult RingReduceScatter::run(Context& ctx) const {
    const CollArgs& a = ctx.args();
    BlockLayout blocks = layoutFrom(a.sendCounts, a.sendDispls);
    const size_t es = ctx.elemSize();
    const char* in = static_cast<const char*>(a.sendBuf);
    char* out = static_cast<char*>(a.recvBuf);
    const Block& own = blocks[ctx.rank()];
    const size_t outBytes = own.count * es;
    // The result may land on the rank's own input block (in place), but anywhere
    // else inside the input would overwrite blocks still to be sent: go via scratch.
    bool aliased = overlaps(out, outBytes, in, layoutEnd(blocks) * es) && out != in + own.offset * es;
    if (!aliased) return ringReduceScatter(ctx, RankGroup::everyone(ctx), blocks, in, nullptr, out);
    std::vector<char> tmp(outBytes);
    HOSTCCL_CHECK(ringReduceScatter(ctx, RankGroup::everyone(ctx), blocks, in, nullptr, tmp.data()));
    ctx.copy(out, tmp.data(), outBytes);
    return HCCL_SUCCESS;
}

Linear RingAllReduce::cost(const CostModel& model) const {
    return ringPassCost(model, true) + ringPassCost(model, false);
}

Linear RingAllGather::cost(const CostModel& model) const { return ringPassCost(model, false); }

Linear RingReduceScatter::cost(const CostModel& model) const { return ringPassCost(model, true); }

}  // namespace hostccl
