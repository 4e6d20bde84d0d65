// torch 2.x's coalesced tensor collectives (all_gather_into_tensor and
// reduce_scatter_tensor over lists, as FSDP, DTensor and the coalescing manager
// issue them): each pair is one collective, queued one after another in one launch,
// so the Work is done when the last is (the stream runs them in order).
#include "torch_compat.h"

#if HOSTCCL_TORCH2

#include <c10/util/Exception.h>

#include "dtypes.h"
#include "process_group.h"

namespace hostccl::torch_backend {

namespace {

void checkPairs(const std::vector<at::Tensor>& outputs, const std::vector<at::Tensor>& inputs, const char* op) {
    TORCH_CHECK(outputs.size() == inputs.size(), "hostccl: ", op, ": ", outputs.size(), " outputs for ", inputs.size(),
                " inputs");
    for (size_t i = 0; i < inputs.size(); ++i) {
        TORCH_CHECK(inputs[i].defined() && outputs[i].defined(), "hostccl: ", op, ": undefined tensor at ", i);
        TORCH_CHECK(inputs[i].device().is_cpu() && outputs[i].device().is_cpu(), "hostccl: ", op,
                    ": tensors must be on the CPU");
        TORCH_CHECK(inputs[i].scalar_type() == outputs[i].scalar_type(), "hostccl: ", op, ": input and output ", i,
                    " differ in type (", inputs[i].scalar_type(), " and ", outputs[i].scalar_type(), ")");
    }
}

// Copies each staged buffer back into the caller's tensor it stands for.
void writeBackAll(std::vector<at::Tensor>& targets, const std::vector<at::Tensor>& bufs) {
    for (size_t i = 0; i < targets.size(); ++i)
        if (!bufs[i].is_same(targets[i])) targets[i].copy_(bufs[i]);
}

}  // namespace

c10::intrusive_ptr<c10d::Work> ProcessGroupHostccl::allgather_into_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                                                                   std::vector<at::Tensor>& inputs,
                                                                                   const c10d::AllgatherOptions&) {
    const char* name = "allgather_into_tensor_coalesced";
    checkPairs(outputs, inputs, name);
    std::vector<at::Tensor> ins, outs;
    std::vector<HcclDataType> types;  // all checked before anything is queued
    for (size_t i = 0; i < inputs.size(); ++i) {
        TORCH_CHECK(outputs[i].numel() == inputs[i].numel() * size_, "hostccl: ", name, ": output ", i, " must have ",
                    size_, " x ", inputs[i].numel(), " elements (got ", outputs[i].numel(), ")");
        types.push_back(hcclTypeOf(inputs[i]));
        ins.push_back(inputs[i].contiguous());
        outs.push_back(outputs[i].contiguous());
    }
    return enqueue(
        c10d::OpType::COALESCED, name, outputs,
        [&](hostccl::Communicator& c) {
            hostccl::Work last;
            for (size_t i = 0; i < ins.size(); ++i)
                if (ins[i].numel() > 0)
                    last = c.allGather(ins[i].data_ptr(), outs[i].data_ptr(), uint64_t(ins[i].numel()), types[i]);
            return last;
        },
        [outputs, ins, outs]() mutable { writeBackAll(outputs, outs); });
}

c10::intrusive_ptr<c10d::Work> ProcessGroupHostccl::reduce_scatter_tensor_coalesced(
    std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs, const c10d::ReduceScatterOptions& opts) {
    const char* name = "reduce_scatter_tensor_coalesced";
    checkPairs(outputs, inputs, name);
    TORCH_CHECK(!isBitwise(opts.reduceOp), "hostccl: ", name,
                ": bitwise reductions (BAND, BOR, BXOR) are not coalesced: reduce-scatter the tensors one by one");
    std::vector<at::Tensor> ins, outs;
    std::vector<HcclDataType> types;  // all checked before anything is queued
    std::vector<HcclReduceOp> ops;
    for (size_t i = 0; i < inputs.size(); ++i) {
        TORCH_CHECK(inputs[i].numel() == outputs[i].numel() * size_, "hostccl: ", name, ": input ", i, " must have ",
                    size_, " x ", outputs[i].numel(), " elements (got ", inputs[i].numel(), ")");
        types.push_back(hcclTypeOf(outputs[i]));
        ops.push_back(hcclOpOf(opts.reduceOp, outputs[i].scalar_type()));
        ins.push_back(premultiplied(inputs[i].contiguous(), inputs[i], opts.reduceOp));
        outs.push_back(outputs[i].contiguous());
    }
    const bool average = needsAverage(opts.reduceOp);
    return enqueue(
        c10d::OpType::COALESCED, name, outputs,
        [&](hostccl::Communicator& c) {
            hostccl::Work last;
            for (size_t i = 0; i < outs.size(); ++i)
                if (outs[i].numel() > 0)
                    last = c.reduceScatter(ins[i].data_ptr(), outs[i].data_ptr(), uint64_t(outs[i].numel()), types[i],
                                           ops[i]);
            return last;
        },
        [outputs, ins, outs, average, n = size_]() mutable {
            if (average)
                for (at::Tensor& o : outs) averageInPlace(o, n);
            writeBackAll(outputs, outs);
        });
}

}  // namespace hostccl::torch_backend

#endif
