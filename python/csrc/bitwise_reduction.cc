// ProcessGroupHostccl::bitwiseReduction: ReduceOp.BAND, BOR and BXOR, which Gloo
// takes (integer and bool tensors) and HCCL's reduce ops (SUM, PROD, MAX, MIN) do not
// have. Every rank's tensor is allgathered on the stream and the ranks' copies are
// folded in rank order once it completed: size times the memory of the tensor, for
// ops that carry flags and masks, not gradients.
#include <c10/util/Exception.h>

#include "dtypes.h"
#include "process_group.h"

namespace hostccl::torch_backend {

bool isBitwise(const c10d::ReduceOp& op) {
    return op.op_ == c10d::ReduceOp::BAND || op.op_ == c10d::ReduceOp::BOR || op.op_ == c10d::ReduceOp::BXOR;
}

namespace {

at::Tensor combine(const at::Tensor& a, const at::Tensor& b, c10d::ReduceOp::RedOpType op) {
    switch (op) {
        case c10d::ReduceOp::BAND: return at::bitwise_and(a, b);
        case c10d::ReduceOp::BOR: return at::bitwise_or(a, b);
        default: return at::bitwise_xor(a, b);
    }
}

}  // namespace

c10::intrusive_ptr<c10d::Work> ProcessGroupHostccl::bitwiseReduction(c10d::OpType type, const char* name,
                                                                     std::vector<at::Tensor> outputs, at::Tensor in,
                                                                     const c10d::ReduceOp& op,
                                                                     std::function<void(const at::Tensor&)> deliver) {
    TORCH_CHECK(at::isIntegralType(in.scalar_type(), /*includeBool=*/true), "hostccl: ", name,
                ": bitwise reductions (BAND, BOR, BXOR) take integer or bool tensors (got ", in.scalar_type(), ")");
    const HcclDataType dtype = hcclTypeOf(in);
    at::Tensor gathered = at::empty({int64_t(size_), in.numel()}, in.options());
    return enqueue(
        type, name, std::move(outputs),
        [&](hostccl::Communicator& c) {
            return in.numel() == 0 ? hostccl::Work()
                                   : c.allGather(in.data_ptr(), gathered.data_ptr(), uint64_t(in.numel()), dtype);
        },
        [in, gathered, kind = op.op_, deliver = std::move(deliver)] {
            at::Tensor folded = gathered[0];
            for (int64_t r = 1; r < gathered.size(0); ++r) folded = combine(folded, gathered[r], kind);
            deliver(folded.view(in.sizes()));
        });
}

}  // namespace hostccl::torch_backend
