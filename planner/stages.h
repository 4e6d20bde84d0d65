// Pipeline stages: the layers cut into `pp` contiguous runs so that the slowest
// stage is as fast as it can be (the pipeline's pace is its slowest stage).
#pragma once

#include <cstdint>
#include <vector>

namespace hostccl::plan {

// `cost[i]`: layer i's time; returns the first layer of each of `stages` stages,
// each stage at least one layer (stages <= cost.size()). Exact: the least
// possible maximum, found by dynamic programming over the cut points.
std::vector<uint32_t> balancedStages(const std::vector<double>& cost, uint32_t stages);

}  // namespace hostccl::plan
