#include "algorithms/hierarchical/hierarchical_gathers.h"

#include <cstring>

#include "algorithms/hierarchical/host_groups.h"
#include "algorithms/ring/ring.h"

namespace hostccl {

namespace {
// Inside the host, round k: local rank j's block is piece j + k q of host h.
BlockLayout localRound(const HostGroups& g, const BlockLayout& blocks, uint32_t h, uint32_t k) {
    BlockLayout round(g.q());
    for (uint32_t j = 0; j < g.q(); ++j) round.set(j, g.pieceOf(blocks, h, j + k * g.q()));
    return round;
}

// Across hosts: piece i of every host, one block per owner.
BlockLayout acrossHosts(const HostGroups& g, const BlockLayout& blocks, uint32_t piece) {
    BlockLayout pieces(g.hosts.size());
    for (uint32_t h = 0; h < g.hosts.size(); ++h) pieces.set(h, g.pieceOf(blocks, h, piece));
    return pieces;
}

bool empty(const BlockLayout& b) { return maxBlockCount(b) == 0; }

// The in-host ring passes and the cross-host ones of the two gathers: each rank
// handles its pieces in increasing order, so owner groups never wait in a cycle.
uint32_t firstPiece(const HostGroups& g) { return g.local.index; }
}  // namespace

HcclResult HierarchicalAllGather::run(Context& ctx) const {
    const CollArgs& a = ctx.args();
    const size_t es = ctx.elemSize();
    const BlockLayout blocks = layoutFrom(a.recvCounts, a.recvDispls);
    char* buf = static_cast<char*>(a.recvBuf);
    const Block& own = blocks[ctx.rank()];
    if (a.sendBuf != buf + own.offset * es) ctx.copy(buf + own.offset * es, a.sendBuf, own.count * es);
    const HostGroups g(ctx);
    if (g.hosts.size() > 1)
        for (uint32_t i = firstPiece(g); i < g.qmax; i += g.q()) {
            const BlockLayout pieces = acrossHosts(g, blocks, i);
            if (!empty(pieces)) HOSTCCL_CHECK(ringAllGather(ctx, g.owners(i), pieces, buf));
        }
    for (uint32_t k = 0; k < g.rounds(); ++k)
        for (uint32_t h = 0; h < g.hosts.size(); ++h) {
            const BlockLayout round = localRound(g, blocks, h, k);
            if (!empty(round)) HOSTCCL_CHECK(ringAllGather(ctx, g.local, round, buf));
        }
    return HCCL_SUCCESS;
}

HcclResult HierarchicalReduceScatter::run(Context& ctx) const {
    const CollArgs& a = ctx.args();
    const size_t es = ctx.elemSize();
    const BlockLayout blocks = layoutFrom(a.sendCounts, a.sendDispls);
    const size_t total = layoutEnd(blocks) * es;
    // Partial sums build up in a copy: the input must not change, and the output may alias it.
    char* work = ctx.scratch(total);
    if (total > 0) ctx.copy(work, a.sendBuf, total);
    const HostGroups g(ctx);
    for (uint32_t k = 0; k < g.rounds(); ++k)
        for (uint32_t h = 0; h < g.hosts.size(); ++h) {
            const BlockLayout round = localRound(g, blocks, h, k);
            if (!empty(round))
                HOSTCCL_CHECK(ringReduceScatter(ctx, g.local, round, work, work, work + round[g.local.index].offset * es));
        }
    if (g.hosts.size() > 1)
        for (uint32_t i = firstPiece(g); i < g.qmax; i += g.q()) {
            const BlockLayout pieces = acrossHosts(g, blocks, i);
            if (!empty(pieces))
                HOSTCCL_CHECK(ringReduceScatter(ctx, g.owners(i), pieces, work, work, work + pieces[g.myHost].offset * es));
        }
    const Block& own = blocks[ctx.rank()];
    if (own.count > 0) ctx.copy(a.recvBuf, work + own.offset * es, own.count * es);
    return HCCL_SUCCESS;
}

namespace {
// The source scatters `buf`'s blocks over `group` (block i to its i-th rank, the
// source keeping its own), then the group allgathers them.
HcclResult scatterAllGather(Context& ctx, const RankGroup& group, uint32_t sourceIndex, char* buf, uint64_t count) {
    const size_t es = ctx.elemSize();
    const BlockLayout blocks = evenBlocks(count, group.size());
    if (group.index == sourceIndex) {
        for (uint32_t i = 0; i < group.size(); ++i)
            if (i != sourceIndex) ctx.send(group.ranks[i], buf + blocks[i].offset * es, blocks[i].count * es);
    } else {
        const Block& mine = blocks[group.index];
        ctx.recv(group.ranks[sourceIndex], buf + mine.offset * es, mine.count * es);
    }
    HOSTCCL_CHECK(ctx.waitAll());
    return ringAllGather(ctx, group, blocks, buf);
}
}  // namespace

HcclResult HierarchicalBroadcast::run(Context& ctx) const {
    const CollArgs& a = ctx.args();
    char* buf = static_cast<char*>(a.recvBuf);
    const HostGroups g(ctx);
    const uint32_t rootHost = ctx.nodeOf(a.root);
    // Each host's leader: the root on its host, else the host's lowest rank.
    RankGroup leaders;
    for (uint32_t h = 0; h < g.hosts.size(); ++h) leaders.ranks.push_back(h == rootHost ? a.root : g.hosts[h][0]);
    leaders.index = g.myHost;
    const uint32_t leader = leaders.ranks[g.myHost];
    if (g.hosts.size() > 1 && ctx.rank() == leader) HOSTCCL_CHECK(scatterAllGather(ctx, leaders, rootHost, buf, a.count));
    uint32_t leaderIndex = 0;
    while (g.local.ranks[leaderIndex] != leader) ++leaderIndex;
    return scatterAllGather(ctx, g.local, leaderIndex, buf, a.count);
}

namespace {
// Both gathers: rounds x hosts in-host ring passes and rounds cross-host passes, each
// step moving one piece of 1/(qmax hosts) of the vector, reduced on arrival or not.
Linear piecePassesCost(const CostModel& model, bool reduces) {
    const uint32_t hosts = model.nodes(), qmax = mostRanksOnAHost(model), rounds = mostRounds(model);
    const double piece = 1.0 / (double(qmax) * hosts);
    auto stepTo = [&](const CostModel::Partner& p) {
        return reduces ? model.reducingStep(p, piece) : model.step(p, piece);
    };
    Linear c = double(rounds * hosts * (qmax - 1)) * stepTo(nextOnHost(model));
    if (hosts > 1) c += double(rounds * (hosts - 1)) * stepTo(counterpartOnNextHost(model));
    return c;
}
}  // namespace

Linear HierarchicalAllGather::cost(const CostModel& model) const { return piecePassesCost(model, false); }

Linear HierarchicalReduceScatter::cost(const CostModel& model) const { return piecePassesCost(model, true); }

// Leaders: a scatter and a ring allgather of 1/N pieces across hosts; then the same
// inside each host with 1/q pieces.
Linear HierarchicalBroadcast::cost(const CostModel& model) const {
    const uint32_t hosts = model.nodes(), qmax = mostRanksOnAHost(model);
    Linear c = double(2 * (qmax - 1)) * model.step(nextOnHost(model), 1.0 / qmax);
    if (hosts < 2) return c;
    const CostModel::Partner leaders = [&model](uint32_t r) {
        const uint32_t h = model.nodeOf(r);
        return model.ranksOn(h)[0] == r ? model.ranksOn((h + 1) % model.nodes())[0] : CostModel::kNone;
    };
    return c + double(2 * (hosts - 1)) * model.step(leaders, 1.0 / hosts);
}

}  // namespace hostccl
