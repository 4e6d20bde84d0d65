#include "common/reduce_half_simd.h"

#include <cpuid.h>
#include <immintrin.h>

#include <cstdint>

#include "common/half.h"

namespace hostccl {

namespace {

#define HOSTCCL_F16C __attribute__((target("avx,f16c")))
#define HOSTCCL_AVX2 __attribute__((target("avx,avx2,f16c")))

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

// 8 floats to bf16 in 32-bit lanes as floatToBf16 rounds them
// (to nearest even; a NaN kept quiet, its top half with the quiet bit set).
HOSTCCL_AVX2 __m256i floatToBf16x8(__m256 f) {
    const __m256i x = _mm256_castps_si256(f);
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(1));
    const __m256i rounded = _mm256_add_epi32(_mm256_add_epi32(x, _mm256_set1_epi32(0x7fff)), lsb);
    const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(f, f, _CMP_UNORD_Q));
    const __m256i quiet = _mm256_or_si256(x, _mm256_set1_epi32(0x400000));
    return _mm256_srli_epi32(_mm256_blendv_epi8(rounded, quiet, nan), 16);
}

// 16 at a time. A bf16 is a float's top half, so interleaving zeros below each makes
// the floats: the low words of each 128-bit half (elements 0-3 and 8-11) and the
// high ones (4-7, 12-15); the pack, also by halves, puts them back in order.
template <typename Op>
HOSTCCL_AVX2 void reduceBf16(void* dst, const void* a, const void* b, size_t n) {
    auto* d = static_cast<uint16_t*>(dst);
    auto* x = static_cast<const uint16_t*>(a);
    auto* y = static_cast<const uint16_t*>(b);
    const __m256i zero = _mm256_setzero_si256();
    size_t i = 0;
    for (; i + 16 <= n; i += 16) {
        const __m256i vx = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(x + i));
        const __m256i vy = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(y + i));
        const __m256 lo = Op::apply(_mm256_castsi256_ps(_mm256_unpacklo_epi16(zero, vx)),
                                    _mm256_castsi256_ps(_mm256_unpacklo_epi16(zero, vy)));
        const __m256 hi = Op::apply(_mm256_castsi256_ps(_mm256_unpackhi_epi16(zero, vx)),
                                    _mm256_castsi256_ps(_mm256_unpackhi_epi16(zero, vy)));
        _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i), _mm256_packus_epi32(floatToBf16x8(lo), floatToBf16x8(hi)));
    }
    for (; i < n; ++i) d[i] = floatToBf16(Op::scalar(bf16ToFloat(x[i]), bf16ToFloat(y[i])));
}

template <template <typename> class Kernel>
ReduceFn byOp(HcclReduceOp op) {
    switch (op) {
        case HCCL_REDUCE_SUM: return Kernel<VSum>::fn;
        case HCCL_REDUCE_PROD: return Kernel<VProd>::fn;
        case HCCL_REDUCE_MAX: return Kernel<VMax>::fn;
        case HCCL_REDUCE_MIN: return Kernel<VMin>::fn;
        default: return nullptr;
    }
}
template <typename Op>
struct Fp16Kernel {
    static constexpr ReduceFn fn = reduceHalf<Op>;
};
template <typename Op>
struct Bf16Kernel {
    static constexpr ReduceFn fn = reduceBf16<Op>;
};

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

// CPUID leaf 7 (EBX bit 5), with F16C's check (which covers the OS saving YMM).
bool cpuHasAvx2() {
    static const bool has = [] {
        unsigned a = 0, b = 0, c = 0, d = 0;
        return cpuHasF16c() && __get_cpuid_count(7, 0, &a, &b, &c, &d) != 0 && (b & (1u << 5)) != 0;
    }();
    return has;
}

ReduceFn reduceFp16F16c(HcclReduceOp op) { return byOp<Fp16Kernel>(op); }
ReduceFn reduceBf16Avx2(HcclReduceOp op) { return byOp<Bf16Kernel>(op); }

}  // namespace hostccl
