#include "common/reduce.h"

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "common/half.h"
#include "common/reduce_half_simd.h"

namespace hostccl {

namespace {

// Integer arithmetic goes through an unsigned type so overflow wraps (as two's
// complement hardware does) instead of being undefined.
template <typename T>
struct UnsignedOf {
    using type = std::make_unsigned_t<T>;
};
template <>
struct UnsignedOf<__int128> {  // strict C++ modes do not treat __int128 as integral
    using type = unsigned __int128;
};

template <typename T>
struct Wrap {
    // At least `unsigned`: narrower types would promote to (signed) int and overflow.
    using U = std::conditional_t<(sizeof(T) < sizeof(unsigned)), unsigned, typename UnsignedOf<T>::type>;
    static T add(T a, T b) { return static_cast<T>(static_cast<U>(a) + static_cast<U>(b)); }
    static T mul(T a, T b) { return static_cast<T>(static_cast<U>(a) * static_cast<U>(b)); }
};

// Integers (and __int128, which strict modes do not call integral) wrap modulo 2^bits.
template <typename T>
constexpr bool kWraps = std::is_integral_v<T> || std::is_same_v<T, __int128>;

struct Sum {
    template <typename T>
    static T apply(T a, T b) {
        if constexpr (kWraps<T>)
            return Wrap<T>::add(a, b);
        else
            return a + b;
    }
};
struct Prod {
    template <typename T>
    static T apply(T a, T b) {
        if constexpr (kWraps<T>)
            return Wrap<T>::mul(a, b);
        else
            return a * b;
    }
};
struct Max {
    template <typename T>
    static T apply(T a, T b) { return a < b ? b : a; }
};
struct Min {
    template <typename T>
    static T apply(T a, T b) { return b < a ? b : a; }
};

// Plain loops: with -O3 the compiler vectorises them for every native type.
template <typename T, typename Op>
void reduceNative(void* dst, const void* a, const void* b, size_t n) {
    T* d = static_cast<T*>(dst);
    const T* x = static_cast<const T*>(a);
    const T* y = static_cast<const T*>(b);
    for (size_t i = 0; i < n; ++i) d[i] = Op::apply(x[i], y[i]);
}

// fp16 and bf16 reduce in float and round once, as the hardware units do.
template <float (*ToF)(uint16_t), uint16_t (*FromF)(float), typename Op>
void reduceHalf(void* dst, const void* a, const void* b, size_t n) {
    uint16_t* d = static_cast<uint16_t*>(dst);
    const uint16_t* x = static_cast<const uint16_t*>(a);
    const uint16_t* y = static_cast<const uint16_t*>(b);
    for (size_t i = 0; i < n; ++i) d[i] = FromF(Op::apply(ToF(x[i]), ToF(y[i])));
}

template <typename Op>
ReduceFn forType(HcclDataType t) {
    switch (t) {
        case HCCL_DATA_TYPE_INT8: return reduceNative<int8_t, Op>;
        case HCCL_DATA_TYPE_INT16: return reduceNative<int16_t, Op>;
        case HCCL_DATA_TYPE_INT32: return reduceNative<int32_t, Op>;
        case HCCL_DATA_TYPE_INT64: return reduceNative<int64_t, Op>;
        case HCCL_DATA_TYPE_UINT8: return reduceNative<uint8_t, Op>;
        case HCCL_DATA_TYPE_UINT16: return reduceNative<uint16_t, Op>;
        case HCCL_DATA_TYPE_UINT32: return reduceNative<uint32_t, Op>;
        case HCCL_DATA_TYPE_UINT64: return reduceNative<uint64_t, Op>;
        case HCCL_DATA_TYPE_INT128: return reduceNative<__int128, Op>;
        case HCCL_DATA_TYPE_FP32: return reduceNative<float, Op>;
        case HCCL_DATA_TYPE_FP64: return reduceNative<double, Op>;
        case HCCL_DATA_TYPE_FP16: return reduceHalf<halfToFloat, floatToHalf, Op>;
        case HCCL_DATA_TYPE_BFP16: return reduceHalf<bf16ToFloat, floatToBf16, Op>;
        default: return nullptr;
    }
}

}  // namespace

ReduceFn reduceFunction(HcclDataType dtype, HcclReduceOp op) {
    if (dtype == HCCL_DATA_TYPE_FP16 && cpuHasF16c()) return reduceFp16F16c(op);
    if (dtype == HCCL_DATA_TYPE_BFP16 && cpuHasAvx2()) return reduceBf16Avx2(op);
    return portableReduceFunction(dtype, op);
}

ReduceFn portableReduceFunction(HcclDataType dtype, HcclReduceOp op) {
    switch (op) {
        case HCCL_REDUCE_SUM: return forType<Sum>(dtype);
        case HCCL_REDUCE_PROD: return forType<Prod>(dtype);
        case HCCL_REDUCE_MAX: return forType<Max>(dtype);
        case HCCL_REDUCE_MIN: return forType<Min>(dtype);
        default: return nullptr;
    }
}

}  // namespace hostccl
