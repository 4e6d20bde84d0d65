#include "dtypes.h"

#include <c10/util/Exception.h>

namespace hostccl::torch_backend {

HcclDataType hcclTypeOf(const at::Tensor& t) {
    switch (t.scalar_type()) {
        case at::kFloat: return HCCL_DATA_TYPE_FP32;
        case at::kDouble: return HCCL_DATA_TYPE_FP64;
        case at::kHalf: return HCCL_DATA_TYPE_FP16;
        case at::kBFloat16: return HCCL_DATA_TYPE_BFP16;
        case at::kChar: return HCCL_DATA_TYPE_INT8;
        case at::kShort: return HCCL_DATA_TYPE_INT16;
        case at::kInt: return HCCL_DATA_TYPE_INT32;
        case at::kLong: return HCCL_DATA_TYPE_INT64;
        case at::kByte: return HCCL_DATA_TYPE_UINT8;
        case at::kBool: return HCCL_DATA_TYPE_UINT8;
        default:
            TORCH_CHECK(false, "hostccl: tensors of type ", t.scalar_type(),
                        " are not supported (HCCL has float32/64, float16, bfloat16, int8/16/32/64, uint8 and bool)");
    }
}

HcclReduceOp hcclOpOf(const c10d::ReduceOp& op, at::ScalarType type) {
    const bool isBool = type == at::kBool;
    switch (op.op_) {
        case c10d::ReduceOp::SUM: return isBool ? HCCL_REDUCE_MAX : HCCL_REDUCE_SUM;
        case c10d::ReduceOp::PRODUCT: return isBool ? HCCL_REDUCE_MIN : HCCL_REDUCE_PROD;
        case c10d::ReduceOp::MIN: return HCCL_REDUCE_MIN;
        case c10d::ReduceOp::MAX: return HCCL_REDUCE_MAX;
        case c10d::ReduceOp::AVG:
            TORCH_CHECK(!isBool, "hostccl: ReduceOp.AVG is not defined for bool tensors");
            return HCCL_REDUCE_SUM;
        case c10d::ReduceOp::BAND:
        case c10d::ReduceOp::BOR:
        case c10d::ReduceOp::BXOR:
            TORCH_CHECK(false, "hostccl: bitwise reductions (BAND, BOR, BXOR) are not HCCL reduce ops: "
                               "ProcessGroupHostccl::bitwiseReduction reduces them");
        case c10d::ReduceOp::PREMUL_SUM:
            TORCH_CHECK(at::isFloatingType(type), "hostccl: ReduceOp.PREMUL_SUM takes floating-point tensors (got ",
                        type, ")");
            return HCCL_REDUCE_SUM;
        default:
            TORCH_CHECK(false, "hostccl: ReduceOp ", int(op.op_), " is not supported");
    }
}

double premulFactor(const c10d::ReduceOp& op) {
#if HOSTCCL_TORCH2
    // PreMulSumSupplement since 2.13, which keeps NCCL's name as an alias.
    const auto* s = dynamic_cast<const c10d::NCCLPreMulSumSupplement*>(op.supplement_.get());
    TORCH_CHECK(s != nullptr, "hostccl: ReduceOp.PREMUL_SUM without its factor");
    return s->tensor_factor.defined() ? s->tensor_factor.item<double>() : s->double_factor;
#else
    const auto* s = dynamic_cast<const c10d::NCCLPreMulSumSupplement*>(op.supplement_.get());
    TORCH_CHECK(s != nullptr, "hostccl: ReduceOp.PREMUL_SUM without its factor");
    if (s->tensor_factors.empty()) return s->double_factor;
    TORCH_CHECK(s->tensor_factors.size() == 1, "hostccl: ReduceOp.PREMUL_SUM takes one factor per process (got ",
                s->tensor_factors.size(), ")");
    return s->tensor_factors[0].item<double>();
#endif
}

at::Tensor premultiplied(const at::Tensor& buf, const at::Tensor& original, const c10d::ReduceOp& op) {
    if (op.op_ != c10d::ReduceOp::PREMUL_SUM) return buf;
    const double factor = premulFactor(op);
    if (buf.is_same(original)) return buf.mul(factor);
    return buf.mul_(factor);
}

void averageInPlace(at::Tensor& t, int size) {
    if (at::isFloatingType(t.scalar_type()))
        t.div_(size);
    else
        t.div_(size, "trunc");
}

}  // namespace hostccl::torch_backend
