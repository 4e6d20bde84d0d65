// Picks the algorithm for an op. Today one algorithm per collective; the cost-model
// selector and HCCL_ALGO overrides plug in here.
#pragma once

#include "algorithms/algorithm.h"

namespace hostccl {

const Algorithm& selectAlgorithm(const Context& ctx);

}  // namespace hostccl
