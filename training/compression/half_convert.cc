#include "training/compression/half_convert.h"

#include <immintrin.h>

#include "common/half.h"
#include "common/reduce_half_simd.h"

namespace hostccl {
inline namespace v1 {
namespace compression {
namespace {

__attribute__((target("avx,f16c"))) size_t toFp16F16c(const float* in, float scale, uint16_t* out, size_t n) {
    const __m256 s = _mm256_set1_ps(scale);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 v = _mm256_mul_ps(_mm256_loadu_ps(in + i), s);
        _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
    }
    return i;  // the tail is the caller's
}

__attribute__((target("avx,f16c"))) size_t fromFp16F16c(const uint16_t* in, float* out, size_t n) {
    size_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i))));
    return i;
}

const bool kF16c = cpuHasF16c();

}  // namespace

void toHalf(const float* in, float scale, uint16_t* out, size_t n, bool fp16) {
    size_t i = fp16 && kF16c ? toFp16F16c(in, scale, out, n) : 0;
    if (fp16) {
        for (; i < n; ++i) out[i] = floatToHalf(in[i] * scale);
    } else {
        for (; i < n; ++i) out[i] = floatToBf16(in[i] * scale);
    }
}

void fromHalf(const uint16_t* in, float* out, size_t n, bool fp16) {
    size_t i = fp16 && kF16c ? fromFp16F16c(in, out, n) : 0;
    if (fp16) {
        for (; i < n; ++i) out[i] = halfToFloat(in[i]);
    } else {
        for (; i < n; ++i) out[i] = bf16ToFloat(in[i]);
    }
}

}  // namespace compression
}  // namespace v1
}  // namespace hostccl
