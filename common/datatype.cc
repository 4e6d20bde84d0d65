#include "common/datatype.h"

namespace hostccl {

namespace {
struct TypeInfo {
    HcclDataType type;
    size_t size;
    const char* name;
    bool reducible;
};
constexpr TypeInfo kTypes[] = {
    {HCCL_DATA_TYPE_INT8, 1, "int8", true},       {HCCL_DATA_TYPE_INT16, 2, "int16", true},
    {HCCL_DATA_TYPE_INT32, 4, "int32", true},     {HCCL_DATA_TYPE_FP16, 2, "fp16", true},
    {HCCL_DATA_TYPE_FP32, 4, "fp32", true},       {HCCL_DATA_TYPE_INT64, 8, "int64", true},
    {HCCL_DATA_TYPE_UINT64, 8, "uint64", true},   {HCCL_DATA_TYPE_UINT8, 1, "uint8", true},
    {HCCL_DATA_TYPE_UINT16, 2, "uint16", true},   {HCCL_DATA_TYPE_UINT32, 4, "uint32", true},
    {HCCL_DATA_TYPE_FP64, 8, "fp64", true},       {HCCL_DATA_TYPE_BFP16, 2, "bfp16", true},
    {HCCL_DATA_TYPE_INT128, 16, "int128", true},  {HCCL_DATA_TYPE_HIF8, 1, "hif8", false},
    {HCCL_DATA_TYPE_FP8E4M3, 1, "fp8e4m3", false}, {HCCL_DATA_TYPE_FP8E5M2, 1, "fp8e5m2", false},
    {HCCL_DATA_TYPE_FP8E8M0, 1, "fp8e8m0", false},
};

const TypeInfo* info(HcclDataType t) {
    for (const auto& i : kTypes)
        if (i.type == t) return &i;
    return nullptr;
}
}  // namespace

bool dtypeValid(HcclDataType t) { return info(t) != nullptr; }
bool dtypeValueValid(int32_t v) {
    for (const auto& i : kTypes)
        if (static_cast<int32_t>(i.type) == v) return true;
    return false;
}
size_t dtypeSize(HcclDataType t) { return info(t) ? info(t)->size : 0; }
const char* dtypeName(HcclDataType t) { return info(t) ? info(t)->name : "invalid"; }
bool dtypeReducible(HcclDataType t) { return info(t) && info(t)->reducible; }

bool reduceOpValid(HcclReduceOp op) {
    return op == HCCL_REDUCE_SUM || op == HCCL_REDUCE_PROD || op == HCCL_REDUCE_MAX || op == HCCL_REDUCE_MIN;
}

const char* reduceOpName(HcclReduceOp op) {
    switch (op) {
        case HCCL_REDUCE_SUM: return "sum";
        case HCCL_REDUCE_PROD: return "prod";
        case HCCL_REDUCE_MAX: return "max";
        case HCCL_REDUCE_MIN: return "min";
        default: return "invalid";
    }
}

}  // namespace hostccl
