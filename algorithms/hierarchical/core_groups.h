// Ranks of one host that outnumber its cores, grouped the way their stream threads
// share the cores (core/topology/worker_affinity.h): core k holds the block of
// neighbouring ranks from k * n / cores on, and the block's lowest rank leads it.
// Each rank of a crowded core runs only when the scheduler gives it the core, so an
// algorithm whose every step waits for a partner switches threads at every step;
// gathering on the leader, working among leaders (one per core) and handing the
// result back lets each rank run once per op. Every rank computes the same groups
// from the communicator's size and the host's cores in the cost model, which all
// ranks share; where the placement differs (a sub-communicator numbering the ranks
// apart) the groups stay correct, only slower.
#pragma once

#include <cstdint>
#include <vector>

#include "algorithms/context.h"
#include "algorithms/cost_model/cost_model.h"

namespace hostccl {

struct CoreGroups {
    CoreGroups(uint32_t ranks, uint32_t cores, uint32_t rank);

    uint32_t ranks = 0;
    uint32_t cores = 1;  // groups; at most `ranks`
    uint32_t mine = 0;   // this rank's group

    uint32_t groupOf(uint32_t r) const { return uint32_t(uint64_t(r) * cores / ranks); }
    uint32_t leaderOf(uint32_t g) const { return uint32_t((uint64_t(g) * ranks + cores - 1) / cores); }
    uint32_t endOf(uint32_t g) const { return g + 1 < cores ? leaderOf(g + 1) : ranks; }  // one past its last rank
    uint32_t sizeOf(uint32_t g) const { return endOf(g) - leaderOf(g); }
    uint32_t leader() const { return leaderOf(mine); }
};

// Whether the call's ranks share one host's cores, more of them than cores, with a
// cost model saying how many (the grouping's inputs, alike on every rank).
bool crowdedOnOneHost(const Context& ctx);
// The grouping for the call (crowdedOnOneHost must hold).
CoreGroups coreGroupsOf(const Context& ctx);
CoreGroups coreGroupsOf(const CostModel& model, uint32_t rank);

// For the cost models: every member's partner is its leader (leaders sit the step
// out), and each leader's partner across bit `mask` of its group number.
CostModel::Partner toLeader(const CostModel& model);
CostModel::Partner leadersAcrossBit(const CostModel& model, uint32_t mask);

}  // namespace hostccl
