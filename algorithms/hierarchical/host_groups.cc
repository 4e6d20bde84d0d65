#include "algorithms/hierarchical/host_groups.h"

#include <algorithm>

namespace hostccl {

HostGroups::HostGroups(const Context& ctx) : hosts(ctx.hostRanks()), myHost(ctx.nodeOf(ctx.rank())) {
    local.ranks = hosts[myHost];
    while (local.ranks[local.index] != ctx.rank()) ++local.index;
    for (const auto& h : hosts) qmax = std::max(qmax, static_cast<uint32_t>(h.size()));
}

RankGroup HostGroups::owners(uint32_t piece) const {
    RankGroup g;
    for (const auto& h : hosts) g.ranks.push_back(h[piece % h.size()]);
    g.index = myHost;
    return g;
}

Block HostGroups::pieceOf(const BlockLayout& blocks, uint32_t h, uint32_t i) const {
    return i < hosts[h].size() ? blocks[hosts[h][i]] : Block{layoutEnd(blocks), 0};
}

namespace {
// A host's ranks are listed in ascending order: a binary search keeps a modelled
// step O(n log n), not O(n^2).
uint32_t positionOnHost(const CostModel& m, uint32_t r) {
    const auto& rs = m.ranksOn(m.nodeOf(r));
    return static_cast<uint32_t>(std::lower_bound(rs.begin(), rs.end(), r) - rs.begin());
}
}  // namespace

CostModel::Partner nextOnHost(const CostModel& model) {
    return [&model](uint32_t r) {
        const auto& rs = model.ranksOn(model.nodeOf(r));
        return rs[(positionOnHost(model, r) + 1) % rs.size()];
    };
}

CostModel::Partner counterpartOnNextHost(const CostModel& model) {
    return [&model](uint32_t r) {
        const auto& next = model.ranksOn((model.nodeOf(r) + 1) % model.nodes());
        return next[positionOnHost(model, r) % next.size()];
    };
}

uint32_t mostRanksOnAHost(const CostModel& model) {
    uint32_t qmax = 0;
    for (uint32_t h = 0; h < model.nodes(); ++h) qmax = std::max(qmax, uint32_t(model.ranksOn(h).size()));
    return qmax;
}

uint32_t mostRounds(const CostModel& model) {
    const uint32_t qmax = mostRanksOnAHost(model);
    uint32_t rounds = 0;
    for (uint32_t h = 0; h < model.nodes(); ++h) {
        const uint32_t q = static_cast<uint32_t>(model.ranksOn(h).size());
        rounds = std::max(rounds, (qmax + q - 1) / q);
    }
    return rounds;
}

}  // namespace hostccl
