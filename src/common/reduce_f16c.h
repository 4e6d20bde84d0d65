// fp16 reductions with the F16C conversion instructions (8 lanes at a time),
// chosen at run time when the CPU has them. Results are bit-identical to the
// portable kernels (the same float operation per element, the same round to
// nearest even, max/min through ordered compares), except which payload a NaN
// result carries when both operands are NaN, which IEEE leaves open.
#pragma once

#include "common/reduce.h"

namespace hostccl {

bool cpuHasF16c();
ReduceFn reduceFp16F16c(HcclReduceOp op);  // nullptr for invalid ops

}  // namespace hostccl
