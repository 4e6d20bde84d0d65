#include "tests/support/values.h"

namespace hostccl::test {

const std::vector<HcclDataType>& reducibleTypes() {
    static const std::vector<HcclDataType> t = {
        HCCL_DATA_TYPE_INT8,  HCCL_DATA_TYPE_INT16,  HCCL_DATA_TYPE_INT32,  HCCL_DATA_TYPE_INT64,
        HCCL_DATA_TYPE_UINT8, HCCL_DATA_TYPE_UINT16, HCCL_DATA_TYPE_UINT32, HCCL_DATA_TYPE_UINT64,
        HCCL_DATA_TYPE_INT128, HCCL_DATA_TYPE_FP16,  HCCL_DATA_TYPE_BFP16,  HCCL_DATA_TYPE_FP32,
        HCCL_DATA_TYPE_FP64};
    return t;
}

const std::vector<HcclDataType>& allTypes() {
    static const std::vector<HcclDataType> t = [] {
        auto v = reducibleTypes();
        for (auto x : {HCCL_DATA_TYPE_HIF8, HCCL_DATA_TYPE_FP8E4M3, HCCL_DATA_TYPE_FP8E5M2, HCCL_DATA_TYPE_FP8E8M0})
            v.push_back(x);
        return v;
    }();
    return t;
}

const std::vector<HcclReduceOp>& allOps() {
    static const std::vector<HcclReduceOp> o = {HCCL_REDUCE_SUM, HCCL_REDUCE_PROD, HCCL_REDUCE_MAX, HCCL_REDUCE_MIN};
    return o;
}

}  // namespace hostccl::test
