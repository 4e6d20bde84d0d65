#include "algorithms/hierarchical/hierarchical_allreduce.h"

#include <algorithm>
#include <cstring>

#include "algorithms/hierarchical/host_groups.h"
#include "algorithms/ring/ring.h"

namespace hostccl {

namespace {
// Round j of a host with q ranks: blocks j*q .. j*q+q-1 of `blocks` (empty past the end).
BlockLayout roundLayout(const BlockLayout& blocks, uint32_t j, uint32_t q) {
    const uint64_t end = blocks.back().offset + blocks.back().count;
    BlockLayout round(q);
    for (uint32_t i = 0; i < q; ++i) {
        const size_t b = size_t(j) * q + i;
        round.set(i, b < blocks.size() ? blocks[b] : Block{end, 0});
    }
    return round;
}

// Block `b` split evenly over the hosts, for the ring between them.
BlockLayout acrossHosts(const Block& b, uint32_t hosts) {
    return BlockLayout::even(b.count, hosts, b.offset);
}
}  // namespace

HcclResult HierarchicalAllReduce::run(Context& ctx) const {
    const CollArgs& a = ctx.args();
    const size_t es = ctx.elemSize();
    char* buf = static_cast<char*>(a.recvBuf);
    if (a.sendBuf != buf && a.count > 0) ctx.copy(buf, a.sendBuf, a.count * es);
    const HostGroups g(ctx);
    const uint32_t q = g.q();
    const BlockLayout blocks = evenBlocks(a.count, g.qmax);

    for (uint32_t j = 0; j < g.rounds(); ++j) {  // 1: reduce-scatter inside the host
        const BlockLayout round = roundLayout(blocks, j, q);
        HOSTCCL_CHECK(ringReduceScatter(ctx, g.local, round, buf, buf, buf + round[g.local.index].offset * es));
    }
    if (g.hosts.size() > 1) {  // 2: each owned block, allreduced among its owners on every host
        for (uint32_t b = g.local.index; b < g.qmax; b += q) {
            const RankGroup owners = g.owners(b);
            const BlockLayout pieces = acrossHosts(blocks[b], owners.size());
            HOSTCCL_CHECK(ringReduceScatter(ctx, owners, pieces, buf, buf, buf + pieces[g.myHost].offset * es));
            HOSTCCL_CHECK(ringAllGather(ctx, owners, pieces, buf));
        }
    }
    for (uint32_t j = 0; j < g.rounds(); ++j)  // 3: allgather inside the host
        HOSTCCL_CHECK(ringAllGather(ctx, g.local, roundLayout(blocks, j, q), buf));
    return HCCL_SUCCESS;
}

// Ring passes inside each host (rounds of q blocks of 1/qmax), and for every block
// a rank owns a ring pass among its owners on the other hosts, all ranks of a host
// at once, so they share the host's network link.
Linear HierarchicalAllReduce::cost(const CostModel& model) const {
    const uint32_t hosts = model.nodes(), qmax = mostRanksOnAHost(model), owned = mostRounds(model);
    uint32_t steps = 0;
    for (uint32_t h = 0; h < hosts; ++h) {
        const uint32_t q = static_cast<uint32_t>(model.ranksOn(h).size());
        steps = std::max(steps, ((qmax + q - 1) / q) * (q - 1));
    }
    Linear c = double(steps) * (model.reducingStep(nextOnHost(model), 1.0 / qmax) + model.step(nextOnHost(model), 1.0 / qmax));
    if (hosts < 2) return c;
    const double piece = 1.0 / (double(qmax) * hosts);
    return c + double(owned * (hosts - 1)) * (model.reducingStep(counterpartOnNextHost(model), piece) +
                                              model.step(counterpartOnNextHost(model), piece));
}

}  // namespace hostccl
