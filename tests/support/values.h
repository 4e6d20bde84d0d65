// Exactly representable test values for every HCCL dtype. Values are small
// integers, so sums, products, maxima and minima are exact in every type and in
// any reduction order; FP8/HIF8 (not reducible) are compared as raw bytes.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "common/datatype.h"
#include "common/half.h"
#include "acl/acl.h"
#include "hccl/hccl_types.h"

namespace hostccl::test {

inline void store(HcclDataType t, void* base, uint64_t i, int64_t v) {
    switch (t) {
        case HCCL_DATA_TYPE_INT8: static_cast<int8_t*>(base)[i] = static_cast<int8_t>(v); break;
        case HCCL_DATA_TYPE_UINT8: static_cast<uint8_t*>(base)[i] = static_cast<uint8_t>(v); break;
        case HCCL_DATA_TYPE_INT16: static_cast<int16_t*>(base)[i] = static_cast<int16_t>(v); break;
        case HCCL_DATA_TYPE_UINT16: static_cast<uint16_t*>(base)[i] = static_cast<uint16_t>(v); break;
        case HCCL_DATA_TYPE_INT32: static_cast<int32_t*>(base)[i] = static_cast<int32_t>(v); break;
        case HCCL_DATA_TYPE_UINT32: static_cast<uint32_t*>(base)[i] = static_cast<uint32_t>(v); break;
        case HCCL_DATA_TYPE_INT64: static_cast<int64_t*>(base)[i] = v; break;
        case HCCL_DATA_TYPE_UINT64: static_cast<uint64_t*>(base)[i] = static_cast<uint64_t>(v); break;
        case HCCL_DATA_TYPE_INT128: static_cast<__int128*>(base)[i] = v; break;
        case HCCL_DATA_TYPE_FP32: static_cast<float*>(base)[i] = static_cast<float>(v); break;
        case HCCL_DATA_TYPE_FP64: static_cast<double*>(base)[i] = static_cast<double>(v); break;
        case HCCL_DATA_TYPE_FP16: static_cast<uint16_t*>(base)[i] = floatToHalf(static_cast<float>(v)); break;
        case HCCL_DATA_TYPE_BFP16: static_cast<uint16_t*>(base)[i] = floatToBf16(static_cast<float>(v)); break;
        default: static_cast<uint8_t*>(base)[i] = static_cast<uint8_t>(v); break;  // fp8 family: raw bytes
    }
}

inline int64_t load(HcclDataType t, const void* base, uint64_t i) {
    switch (t) {
        case HCCL_DATA_TYPE_INT8: return static_cast<const int8_t*>(base)[i];
        case HCCL_DATA_TYPE_UINT8: return static_cast<const uint8_t*>(base)[i];
        case HCCL_DATA_TYPE_INT16: return static_cast<const int16_t*>(base)[i];
        case HCCL_DATA_TYPE_UINT16: return static_cast<const uint16_t*>(base)[i];
        case HCCL_DATA_TYPE_INT32: return static_cast<const int32_t*>(base)[i];
        case HCCL_DATA_TYPE_UINT32: return static_cast<const uint32_t*>(base)[i];
        case HCCL_DATA_TYPE_INT64: return static_cast<const int64_t*>(base)[i];
        case HCCL_DATA_TYPE_UINT64: return static_cast<int64_t>(static_cast<const uint64_t*>(base)[i]);
        case HCCL_DATA_TYPE_INT128: return static_cast<int64_t>(static_cast<const __int128*>(base)[i]);
        case HCCL_DATA_TYPE_FP32: return static_cast<int64_t>(static_cast<const float*>(base)[i]);
        case HCCL_DATA_TYPE_FP64: return static_cast<int64_t>(static_cast<const double*>(base)[i]);
        case HCCL_DATA_TYPE_FP16: return static_cast<int64_t>(halfToFloat(static_cast<const uint16_t*>(base)[i]));
        case HCCL_DATA_TYPE_BFP16: return static_cast<int64_t>(bf16ToFloat(static_cast<const uint16_t*>(base)[i]));
        default: return static_cast<const uint8_t*>(base)[i];
    }
}

// Rank r's input at element i for reduce op `op`: products use 1s and at most a
// few 2s per element, sums stay below 127 for 16 ranks, max/min are spread out.
inline int64_t input(HcclReduceOp op, uint32_t rank, uint64_t i) {
    switch (op) {
        case HCCL_REDUCE_PROD: return (rank + i) % 5 == 0 ? 2 : 1;
        case HCCL_REDUCE_MAX:
        case HCCL_REDUCE_MIN: return static_cast<int64_t>((rank * 7 + i * 3) % 23) + 1;
        default: return static_cast<int64_t>((rank + i) % 7) + 1;
    }
}

inline int64_t combine(HcclReduceOp op, int64_t a, int64_t b) {
    switch (op) {
        case HCCL_REDUCE_PROD: return a * b;
        case HCCL_REDUCE_MAX: return a > b ? a : b;
        case HCCL_REDUCE_MIN: return a < b ? a : b;
        default: return a + b;
    }
}

inline int64_t reduced(HcclReduceOp op, uint32_t nranks, uint64_t i) {
    int64_t acc = input(op, 0, i);
    for (uint32_t r = 1; r < nranks; ++r) acc = combine(op, acc, input(op, r, i));
    return acc;
}

// A payload value for data-movement ops: distinct per (rank, element), < 128.
inline int64_t payload(uint32_t rank, uint64_t i) { return static_cast<int64_t>((rank * 31 + i) % 113) + 1; }

// Device memory, as HCCL programs allocate it (aclrtMalloc: shareable with peer
// processes, so large transfers between processes take the single-copy path).
class DeviceBuffer {
public:
    // No memset: hostccl's aclrtMalloc maps a fresh memfd, whose pages the kernel
    // zeroes on first touch (clearing them again was a third of the matrices' time).
    explicit DeviceBuffer(size_t bytes) : bytes_(bytes + 16) {
        if (aclrtMalloc(&p_, bytes_, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) std::abort();
    }
    ~DeviceBuffer() { aclrtFree(p_); }
    DeviceBuffer(const DeviceBuffer&) = delete;
    DeviceBuffer& operator=(const DeviceBuffer&) = delete;
    char* data() const { return static_cast<char*>(p_); }

private:
    size_t bytes_;
    void* p_ = nullptr;
};

inline DeviceBuffer buffer(HcclDataType t, uint64_t count) { return DeviceBuffer(count * dtypeSize(t)); }

const std::vector<HcclDataType>& allTypes();
const std::vector<HcclDataType>& reducibleTypes();
const std::vector<HcclReduceOp>& allOps();

}  // namespace hostccl::test
