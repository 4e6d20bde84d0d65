// Bulk float <-> fp16 / bf16 conversion for the cast compressors: F16C (8 lanes)
// when the CPU has it, else the portable scalar conversions of common/half.h. Both
// round to nearest even, so results do not depend on the machine.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hostccl {
inline namespace v1 {
namespace compression {

// out[i] = half(in[i] * scale) (fp16 when `fp16`, else bf16).
void toHalf(const float* in, float scale, uint16_t* out, size_t n, bool fp16);
// out[i] = float(in[i]).
void fromHalf(const uint16_t* in, float* out, size_t n, bool fp16);

}  // namespace compression
}  // namespace v1
}  // namespace hostccl
