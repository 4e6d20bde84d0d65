// Picks the algorithm for an op: the family HCCL_ALGO / hcclAlgo names when hostccl
// has it for that op, else the adaptive choice (size thresholds today; issue 4's
// cost model next).
#pragma once

#include "algorithms/algorithm.h"

namespace hostccl {

const Algorithm& selectAlgorithm(const Context& ctx);

}  // namespace hostccl
