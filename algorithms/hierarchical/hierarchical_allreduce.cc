#include "algorithms/hierarchical/hierarchical_allreduce.h"

#include <cstring>

#include "algorithms/rank_group.h"
#include "algorithms/ring/ring.h"

namespace hostccl {

namespace {
// Ranks of every host, in rank order.
std::vector<std::vector<uint32_t>> ranksPerHost(const Context& ctx) {
    std::vector<std::vector<uint32_t>> hosts(ctx.nodes());
    for (uint32_t r = 0; r < ctx.size(); ++r) hosts[ctx.nodeOf(r)].push_back(r);
    return hosts;
}

// Round j of a host with q ranks: blocks j*q .. j*q+q-1 of `blocks` (empty past the end).
BlockLayout roundLayout(const BlockLayout& blocks, uint32_t j, uint32_t q) {
    const uint64_t end = blocks.back().offset + blocks.back().count;
    BlockLayout round(q);
    for (uint32_t i = 0; i < q; ++i) {
        const size_t b = size_t(j) * q + i;
        round[i] = b < blocks.size() ? blocks[b] : Block{end, 0};
    }
    return round;
}

// Block `b` split evenly over the hosts, for the ring between them.
BlockLayout acrossHosts(const Block& b, uint32_t hosts) {
    BlockLayout pieces = evenBlocks(b.count, hosts);
    for (Block& p : pieces) p.offset += b.offset;
    return pieces;
}
}  // namespace

HcclResult HierarchicalAllReduce::run(Context& ctx) const {
    const CollArgs& a = ctx.args();
    const size_t es = ctx.elemSize();
    char* buf = static_cast<char*>(a.recvBuf);
    if (a.sendBuf != buf && a.count > 0) std::memmove(buf, a.sendBuf, a.count * es);
    const auto hosts = ranksPerHost(ctx);
    const uint32_t myHost = ctx.nodeOf(ctx.rank());
    RankGroup local{hosts[myHost], 0};
    while (local.ranks[local.index] != ctx.rank()) ++local.index;
    const uint32_t q = local.size();
    uint32_t qmax = 0;
    for (const auto& h : hosts) qmax = h.size() > qmax ? static_cast<uint32_t>(h.size()) : qmax;
    const BlockLayout blocks = evenBlocks(a.count, qmax);
    const uint32_t rounds = (qmax + q - 1) / q;

    for (uint32_t j = 0; j < rounds; ++j) {  // 1: reduce-scatter inside the host
        const BlockLayout round = roundLayout(blocks, j, q);
        HOSTCCL_CHECK(ringReduceScatter(ctx, local, round, buf, buf, buf + round[local.index].offset * es));
    }
    if (hosts.size() > 1) {  // 2: each owned block, allreduced among its owners on every host
        for (uint32_t b = local.index; b < qmax; b += q) {
            RankGroup owners;
            for (const auto& h : hosts) owners.ranks.push_back(h[b % h.size()]);
            owners.index = myHost;
            const BlockLayout pieces = acrossHosts(blocks[b], owners.size());
            HOSTCCL_CHECK(ringReduceScatter(ctx, owners, pieces, buf, buf, buf + pieces[myHost].offset * es));
            HOSTCCL_CHECK(ringAllGather(ctx, owners, pieces, buf));
        }
    }
    for (uint32_t j = 0; j < rounds; ++j)  // 3: allgather inside the host
        HOSTCCL_CHECK(ringAllGather(ctx, local, roundLayout(blocks, j, q), buf));
    return HCCL_SUCCESS;
}

}  // namespace hostccl
