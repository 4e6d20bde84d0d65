// Collective times for a plan's groups, from the simulator: the real algorithms,
// picked by the real selector, on the group's part of the cluster (group_layout.h),
// on virtual time, at the rates of data out of cache. Each (layout, collective,
// size) is simulated once.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <tuple>

#include "common/coll_type.h"
#include "planner/group_layout.h"
#include "sim/platform.h"

namespace hostccl::sim {
class Simulation;
}

namespace hostccl::plan {

class CommEstimator {
public:
    // `dataInCache`: ops whose data is in cache (the crowding probe's), not a step's.
    explicit CommEstimator(const sim::Platform& world, bool dataInCache = false);
    ~CommEstimator();

    // Seconds for one op of `bytes` as nccl-tests count them (allreduce: the vector;
    // allgather: the gathered result) on a group laid out as `g`; 0 for one rank.
    // Sizes too small to split are rounded up to one element per rank.
    double seconds(const GroupLayout& g, CollType type, uint64_t bytes);
    // One message of `bytes` between the two ranks of `pair`.
    double sendSeconds(const GroupLayout& pair, uint64_t bytes);
    uint64_t simulatedOps() const { return simulated_; }
    const sim::Platform& world() const { return world_; }

private:
    sim::Simulation& simulationFor(const GroupLayout& g);

    sim::Platform world_;
    bool dataInCache_;
    std::map<GroupLayout, std::unique_ptr<sim::Simulation>> sims_;
    std::map<std::tuple<GroupLayout, int, uint64_t>, double> cache_;
    uint64_t simulated_ = 0;
};

}  // namespace hostccl::plan
