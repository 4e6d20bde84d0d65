#include "common/reduce_f16c.h"

#include <cpuid.h>
#include <immintrin.h>

#include <cstdint>

#include "common/half.h"

namespace hostccl {

namespace {

#define HOSTCCL_F16C __attribute__((target("avx,f16c")))

struct VSum {
    HOSTCCL_F16C static __m256 apply(__m256 a, __m256 b) { return _mm256_add_ps(a, b); }
    static float scalar(float a, float b) { return a + b; }
};
struct VProd {
    HOSTCCL_F16C static __m256 apply(__m256 a, __m256 b) { return _mm256_mul_ps(a, b); }
    static float scalar(float a, float b) { return a * b; }
};
// a < b ? b : a, exactly (an unordered compare is false, so a NaN `a` is kept).
struct VMax {
    HOSTCCL_F16C static __m256 apply(__m256 a, __m256 b) { return _mm256_blendv_ps(a, b, _mm256_cmp_ps(a, b, _CMP_LT_OQ)); }
    static float scalar(float a, float b) { return a < b ? b : a; }
};
// b < a ? b : a
struct VMin {
    HOSTCCL_F16C static __m256 apply(__m256 a, __m256 b) { return _mm256_blendv_ps(a, b, _mm256_cmp_ps(b, a, _CMP_LT_OQ)); }
    static float scalar(float a, float b) { return b < a ? b : a; }
};

template <typename Op>
HOSTCCL_F16C void reduceHalf(void* dst, const void* a, const void* b, size_t n) {
    auto* d = static_cast<uint16_t*>(dst);
    auto* x = static_cast<const uint16_t*>(a);
    auto* y = static_cast<const uint16_t*>(b);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        __m256 fx = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(x + i)));
        __m256 fy = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(y + i)));
        _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i),
                         _mm256_cvtps_ph(Op::apply(fx, fy), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    }
    for (; i < n; ++i) d[i] = floatToHalf(Op::scalar(halfToFloat(x[i]), halfToFloat(y[i])));
}

}  // namespace

// From CPUID leaf 1 (ECX: bit 27 OSXSAVE, 28 AVX, 29 F16C) and XCR0 (the OS saves
// the YMM state): clang has no __builtin_cpu_supports("f16c").
bool cpuHasF16c() {
    static const bool has = [] {
        unsigned a = 0, b = 0, c = 0, d = 0;
        if (__get_cpuid(1, &a, &b, &c, &d) == 0) return false;
        const unsigned need = (1u << 27) | (1u << 28) | (1u << 29);
        if ((c & need) != need) return false;
        unsigned lo = 0, hi = 0;
        __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
        return (lo & 0x6) == 0x6;
    }();
    return has;
}

ReduceFn reduceFp16F16c(HcclReduceOp op) {
    switch (op) {
        case HCCL_REDUCE_SUM: return reduceHalf<VSum>;
        case HCCL_REDUCE_PROD: return reduceHalf<VProd>;
        case HCCL_REDUCE_MAX: return reduceHalf<VMax>;
        case HCCL_REDUCE_MIN: return reduceHalf<VMin>;
        default: return nullptr;
    }
}

}  // namespace hostccl
