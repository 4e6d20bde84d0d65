// Pipeline stages: the layers cut into `pp` contiguous runs so that the slowest
// stage is as fast as it can be (the pipeline's pace is its slowest stage).
#pragma once

#include <cstdint>
#include <vector>

namespace hostccl::plan {

// `cost[i]`: layer i's time; `cutBefore[i]`: a stage may begin at layer i (empty:
// anywhere). Returns the first layer of each of `stages` stages, each at least one
// layer, or nothing when the layers cannot be cut that many times. Exact: the least
// possible maximum, found by dynamic programming over the cut points.
std::vector<uint32_t> balancedStages(const std::vector<double>& cost, uint32_t stages,
                                     const std::vector<bool>& cutBefore = {});

}  // namespace hostccl::plan
