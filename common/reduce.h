// Element-wise reduction kernels: dst[i] = a[i] (op) b[i] for `count` elements.
// dst may alias a or b, so the same kernel reduces in place and out of place in
// one pass over memory.
#pragma once

#include <cstddef>

#include "hccl/hccl_types.h"

namespace hostccl {

using ReduceFn = void (*)(void* dst, const void* a, const void* b, size_t count);

// nullptr when the (dtype, op) pair has no reduction (FP8/HIF8, invalid values).
// Picks the fastest kernel this CPU runs; every choice gives identical bits (NaN
// payloads aside, see reduce_half_simd.h).
ReduceFn reduceFunction(HcclDataType dtype, HcclReduceOp op);
// The portable kernels only (tests compare the CPU-specific ones against them).
ReduceFn portableReduceFunction(HcclDataType dtype, HcclReduceOp op);

}  // namespace hostccl
