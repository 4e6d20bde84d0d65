// Reduction kernels and the fp16/bf16 conversions they rest on.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <algorithm>
#include <limits>

#include "common/half.h"
#include "common/reduce.h"
#include "common/reduce_half_simd.h"

using namespace hostccl;

TEST(Half, EveryFiniteHalfRoundTripsThroughFloat) {
    for (uint32_t h = 0; h < 0x10000; ++h) {
        uint16_t x = static_cast<uint16_t>(h);
        if ((x & 0x7c00) == 0x7c00 && (x & 0x3ff)) continue;  // NaN payloads are checked below
        ASSERT_EQ(floatToHalf(halfToFloat(x)), x) << std::hex << h;
    }
}

TEST(Half, RoundsToNearestEvenAndHandlesSpecials) {
    EXPECT_EQ(floatToHalf(1.0f), 0x3c00);
    EXPECT_EQ(floatToHalf(1.0f + 1.0f / 2048), 0x3c00);             // tie -> even (down)
    EXPECT_EQ(floatToHalf(1.0f + 3.0f / 2048), 0x3c02);             // tie -> even (up)
    EXPECT_EQ(floatToHalf(65504.0f), 0x7bff);                       // largest finite
    EXPECT_EQ(floatToHalf(65520.0f), 0x7c00);                       // rounds to infinity
    EXPECT_EQ(floatToHalf(-std::numeric_limits<float>::infinity()), 0xfc00);
    EXPECT_EQ(floatToHalf(5.9604644775390625e-8f), 0x0001);         // smallest subnormal
    EXPECT_EQ(floatToHalf(2.9802322387695312e-8f), 0x0000);         // half of it: tie to even zero
    EXPECT_TRUE(std::isnan(halfToFloat(floatToHalf(std::nanf("")))));
}

TEST(Bf16, RoundsToNearestEvenAndKeepsNan) {
    EXPECT_EQ(floatToBf16(1.0f), 0x3f80);
    EXPECT_EQ(bf16ToFloat(0x3f80), 1.0f);
    EXPECT_EQ(floatToBf16(bitsFloat(0x3f808000)), 0x3f80);  // tie -> even
    EXPECT_EQ(floatToBf16(bitsFloat(0x3f818000)), 0x3f82);
    EXPECT_TRUE(std::isnan(bf16ToFloat(floatToBf16(std::nanf("")))));
}

template <typename T>
std::vector<T> apply(HcclDataType t, HcclReduceOp op, std::vector<T> a, const std::vector<T>& b) {
    ReduceFn f = reduceFunction(t, op);
    EXPECT_NE(f, nullptr);
    f(a.data(), a.data(), b.data(), a.size());  // in place: dst aliases a
    return a;
}

TEST(Reduce, IntegersWrapInsteadOfOverflowing) {
    EXPECT_EQ(apply<int8_t>(HCCL_DATA_TYPE_INT8, HCCL_REDUCE_SUM, {127, -128}, {1, -1}), (std::vector<int8_t>{-128, 127}));
    EXPECT_EQ(apply<uint16_t>(HCCL_DATA_TYPE_UINT16, HCCL_REDUCE_PROD, {65535}, {65535}), (std::vector<uint16_t>{1}));
    EXPECT_EQ(apply<int64_t>(HCCL_DATA_TYPE_INT64, HCCL_REDUCE_PROD, {INT64_MAX}, {2}), (std::vector<int64_t>{-2}));
}

TEST(Reduce, MaxMinAndInt128) {
    EXPECT_EQ(apply<int32_t>(HCCL_DATA_TYPE_INT32, HCCL_REDUCE_MAX, {-5, 7, 0}, {3, -9, 0}), (std::vector<int32_t>{3, 7, 0}));
    EXPECT_EQ(apply<uint64_t>(HCCL_DATA_TYPE_UINT64, HCCL_REDUCE_MIN, {5, UINT64_MAX}, {9, 1}), (std::vector<uint64_t>{5, 1}));
    __int128 big = static_cast<__int128>(1) << 100;
    auto r = apply<__int128>(HCCL_DATA_TYPE_INT128, HCCL_REDUCE_SUM, {big, -big}, {big, 3});
    EXPECT_TRUE(r[0] == (big << 1) && r[1] == -big + 3);
}

TEST(Reduce, HalfTypesReduceInFloatAndRoundOnce) {
    std::vector<uint16_t> a = {floatToHalf(1.5f), floatToHalf(2048.0f)}, b = {floatToHalf(2.25f), floatToHalf(1.0f)};
    auto r = apply<uint16_t>(HCCL_DATA_TYPE_FP16, HCCL_REDUCE_SUM, a, b);
    EXPECT_EQ(halfToFloat(r[0]), 3.75f);
    EXPECT_EQ(halfToFloat(r[1]), 2048.0f);  // 2049 is not an fp16: ties to even
    std::vector<uint16_t> c = {floatToBf16(3.0f)}, d = {floatToBf16(-2.0f)};
    EXPECT_EQ(bf16ToFloat(apply<uint16_t>(HCCL_DATA_TYPE_BFP16, HCCL_REDUCE_PROD, c, d)[0]), -6.0f);
}

TEST(Reduce, OutOfPlaceLeavesInputsAlone) {
    std::vector<float> a = {1, 2, 3}, b = {10, 20, 30}, out(3);
    reduceFunction(HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM)(out.data(), a.data(), b.data(), 3);
    EXPECT_EQ(out, (std::vector<float>{11, 22, 33}));
    EXPECT_EQ(a, (std::vector<float>{1, 2, 3}));
}

TEST(Reduce, Fp8AndInvalidPairsHaveNoKernel) {
    for (auto t : {HCCL_DATA_TYPE_HIF8, HCCL_DATA_TYPE_FP8E4M3, HCCL_DATA_TYPE_FP8E5M2, HCCL_DATA_TYPE_FP8E8M0})
        EXPECT_EQ(reduceFunction(t, HCCL_REDUCE_SUM), nullptr);
    EXPECT_EQ(reduceFunction(HCCL_DATA_TYPE_FP32, HCCL_REDUCE_RESERVED), nullptr);
    EXPECT_EQ(reduceFunction(HCCL_DATA_TYPE_RESERVED, HCCL_REDUCE_SUM), nullptr);
}

// The CPU-specific kernel (F16C when present) gives the portable kernel's bits for
// every fp16 value against a spread of partners (including inf, NaN, subnormals),
// for every op, at lengths that exercise both the vector body and the tail. Where
// both operands are NaN, IEEE leaves the payload open (and compilers may swap the
// operands of a commutative op): there both results must be NaN.
// Every 16-bit pattern against partners (zeros, subnormals, ones, the largest finite,
// infinities, NaNs, others), for `dtype` (fp16 or bf16) with `isNan` its NaN test.
static void expectDispatchedHalfMatchesPortable(HcclDataType dtype, const std::vector<uint16_t>& partners,
                                         bool (*isNan)(uint16_t)) {
    std::vector<uint16_t> a(65536 + 5), b(a.size());
    for (size_t i = 0; i < a.size(); ++i) a[i] = static_cast<uint16_t>(i);
    for (HcclReduceOp op : {HCCL_REDUCE_SUM, HCCL_REDUCE_PROD, HCCL_REDUCE_MAX, HCCL_REDUCE_MIN})
        for (uint16_t p : partners) {
            std::fill(b.begin(), b.end(), p);
            std::vector<uint16_t> fast(a.size()), portable(a.size());
            reduceFunction(dtype, op)(fast.data(), a.data(), b.data(), a.size());
            portableReduceFunction(dtype, op)(portable.data(), a.data(), b.data(), a.size());
            for (size_t i = 0; i < a.size(); ++i) {
                if (isNan(fast[i]) && isNan(portable[i])) continue;
                ASSERT_EQ(fast[i], portable[i]) << "dtype " << dtype << " op " << op << " a " << std::hex << a[i] << " partner " << p;
            }
        }
}

TEST(Reduce, DispatchedFp16KernelMatchesThePortableOneBitForBit) {
    expectDispatchedHalfMatchesPortable(
        HCCL_DATA_TYPE_FP16, {0x0000, 0x8000, 0x0001, 0x03ff, 0x3c00, 0xbc00, 0x7bff, 0x7c00, 0xfc00, 0x7e00, 0x3555, 0x4248},
        [](uint16_t h) { return (h & 0x7c00) == 0x7c00 && (h & 0x3ff) != 0; });
}

// bf16 the same (rounding ties to even, overflow to infinity, NaNs kept quiet).
TEST(Reduce, DispatchedBf16KernelMatchesThePortableOneBitForBit) {
    if (!cpuHasAvx2()) GTEST_SKIP() << "this CPU has no AVX2: the portable bf16 kernel is the only one";
    ASSERT_NE(reduceFunction(HCCL_DATA_TYPE_BFP16, HCCL_REDUCE_SUM), portableReduceFunction(HCCL_DATA_TYPE_BFP16, HCCL_REDUCE_SUM));
    expectDispatchedHalfMatchesPortable(
        HCCL_DATA_TYPE_BFP16, {0x0000, 0x8000, 0x0001, 0x007f, 0x3f80, 0xbf80, 0x7f7f, 0x7f80, 0xff80, 0x7fc0, 0x7f81, 0x3f81, 0x4049},
        [](uint16_t h) { return (h & 0x7f80) == 0x7f80 && (h & 0x7f) != 0; });
}
