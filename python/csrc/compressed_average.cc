// ProcessGroupHostccl::compressedAverage: the DDP hooks of hostccl.torch.hooks.
#include <c10/util/Exception.h>

#include "hook_compressor.h"
#include "process_group.h"

namespace hostccl::torch_backend {

c10::intrusive_ptr<c10d::Work> ProcessGroupHostccl::compressedAverage(HookCompressor& compressor, at::Tensor bucket,
                                                                      int64_t key) {
    TORCH_CHECK(bucket.defined() && bucket.device().is_cpu() && bucket.layout() == at::kStrided,
                "hostccl: compressed average: the bucket must be a dense CPU tensor");
    TORCH_CHECK(bucket.scalar_type() == at::kFloat, "hostccl: compressed average (", compressor.name(),
                ") takes float32 buckets (got ", bucket.scalar_type(), ")");
    TORCH_CHECK(key >= 0, "hostccl: compressed average: the bucket key must not be negative (got ", key, ")");
    at::Tensor buf = bucket.contiguous();
    // Filled by the launch below, read by the decode after it: both hold it.
    auto pending = std::make_shared<std::unique_ptr<hostccl::PendingReduction>>();
    return enqueue(
        c10d::OpType::ALLREDUCE, "compressed allreduce", {bucket},
        [&](hostccl::Communicator& c) {
            if (buf.numel() == 0) return hostccl::Work();
            *pending = compressor.start(c, {buf.data_ptr<float>(), size_t(buf.numel())}, size_t(key));
            return (*pending)->collective();
        },
        [bucket, buf, pending]() mutable {
            if (*pending) (*pending)->finish();
            if (!buf.is_same(bucket)) bucket.copy_(buf);
        });
}

}  // namespace hostccl::torch_backend
