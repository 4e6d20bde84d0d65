#include "algorithms/hierarchical/core_groups.h"

#include <algorithm>

#include "algorithms/halving_doubling/fold.h"
#include "algorithms/selector.h"

namespace hostccl {

CoreGroups::CoreGroups(uint32_t ranks, uint32_t cores, uint32_t rank)
    : ranks(ranks), cores(std::max(1u, std::min(cores, ranks))) {
    mine = groupOf(rank);
}

bool crowdedOnOneHost(const Context& ctx) {
    if (!ctx.crowded() || ctx.nodes() != 1 || ctx.costs() == nullptr) return false;
    return modelOf(*ctx.costs()).coresOn(0) < ctx.size();
}

CoreGroups coreGroupsOf(const CostModel& model, uint32_t rank) {
    return CoreGroups(model.ranks(), model.coresOn(0), rank);
}

CoreGroups coreGroupsOf(const Context& ctx) { return coreGroupsOf(modelOf(*ctx.costs()), ctx.rank()); }

CostModel::Partner toLeader(const CostModel& model) {
    return [&model](uint32_t r) {
        const CoreGroups g = coreGroupsOf(model, r);
        return g.leader() == r ? CostModel::kNone : g.leader();
    };
}

CostModel::Partner leadersAcrossBit(const CostModel& model, uint32_t mask) {
    return [&model, mask](uint32_t r) {
        const CoreGroups g = coreGroupsOf(model, r);
        if (g.leader() != r) return CostModel::kNone;
        const Fold f(g.cores, g.mine);
        if (f.sitsOut() || mask >= f.p2) return CostModel::kNone;  // one leader: nobody across
        return g.leaderOf(f.realRank(f.virtualRank() ^ mask));
    };
}

}  // namespace hostccl
