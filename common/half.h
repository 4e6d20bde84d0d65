// IEEE binary16 (fp16) and bfloat16 <-> float, round to nearest even, NaN kept.
// Bit-exact and branch-light so the same results come from every code path.
#pragma once

#include <cstdint>
#include <cstring>

namespace hostccl {

inline uint32_t floatBits(float f) {
    uint32_t u;
    std::memcpy(&u, &f, sizeof u);
    return u;
}
inline float bitsFloat(uint32_t u) {
    float f;
    std::memcpy(&f, &u, sizeof f);
    return f;
}

inline float halfToFloat(uint16_t h) {
    uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    uint32_t exp = (h >> 10) & 0x1fu;
    uint32_t mant = h & 0x3ffu;
    if (exp == 0x1f) return bitsFloat(sign | 0x7f800000u | (mant << 13));  // inf / nan
    if (exp != 0) return bitsFloat(sign | ((exp + 112) << 23) | (mant << 13));
    if (mant == 0) return bitsFloat(sign);
    // Subnormal half: value = mant * 2^-24, exact in float.
    float v = static_cast<float>(mant) * 5.9604644775390625e-8f;
    return sign ? -v : v;
}

inline uint16_t floatToHalf(float f) {
    uint32_t x = floatBits(f);
    uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
    uint32_t absx = x & 0x7fffffffu;
    if (absx >= 0x7f800000u) {  // inf or nan (keep a quiet nan)
        return static_cast<uint16_t>(sign | 0x7c00u | (absx > 0x7f800000u ? 0x200u | ((absx >> 13) & 0x3ffu) : 0));
    }
    if (absx >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to inf
    if (absx < 0x38800000u) {  // result is subnormal or zero
        if (absx < 0x33000000u) return sign;  // below half the smallest subnormal
        uint32_t exp = absx >> 23;
        uint32_t mant = (absx & 0x7fffffu) | 0x800000u;
        uint32_t shift = 126 - exp;  // 14..24
        uint32_t half = mant >> shift;
        uint32_t rem = mant & ((1u << shift) - 1);
        uint32_t mid = 1u << (shift - 1);
        if (rem > mid || (rem == mid && (half & 1u))) ++half;
        return static_cast<uint16_t>(sign | half);
    }
    uint32_t rounded = absx + 0xfffu + ((absx >> 13) & 1u);  // round to nearest even
    return static_cast<uint16_t>(sign | ((rounded - 0x38000000u) >> 13));
}

inline float bf16ToFloat(uint16_t b) { return bitsFloat(static_cast<uint32_t>(b) << 16); }

inline uint16_t floatToBf16(float f) {
    uint32_t x = floatBits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet nan
    x += 0x7fffu + ((x >> 16) & 1u);
    return static_cast<uint16_t>(x >> 16);
}

}  // namespace hostccl
