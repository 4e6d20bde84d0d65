// fp16 and bf16 reductions 8 lanes at a time, chosen at run time when the CPU has
// the instructions: fp16 through the F16C conversions, bf16 through AVX2 integer
// shifts (a bf16 is a float's top half). Results are bit-identical to the portable
// kernels (the same float operation per element, the same round to nearest even,
// max/min through ordered compares), except which payload a NaN result carries
// when both operands are NaN, which IEEE leaves open.
#pragma once

#include "common/reduce.h"

namespace hostccl {

bool cpuHasF16c();
bool cpuHasAvx2();  // and F16C: the bf16 kernels share the fp16 ones' float ops
ReduceFn reduceFp16F16c(HcclReduceOp op);  // nullptr for invalid ops
ReduceFn reduceBf16Avx2(HcclReduceOp op);  // nullptr for invalid ops

}  // namespace hostccl
