// A training-layer gradient compressor (hostccl/compression.hpp) shared by the DDP
// communication hooks of hostccl.torch.hooks: one per hook state, its error-feedback
// residuals kept across steps per bucket.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include <hostccl/compression.hpp>

namespace hostccl::torch_backend {

class HookCompressor {
public:
    // "topk[:ratio]", "sign", "fp16", "bf16", "none"; a bad spec throws hostccl::Error.
    explicit HookCompressor(const std::string& spec) : compressor_(hostccl::makeCompressor(spec)) {}

    std::string name() const { return compressor_->name(); }
    // Bytes sent so far, and what fp32 allreduces of the same buckets would have sent.
    uint64_t wireBytes() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return compressor_->wireBytes();
    }
    uint64_t fp32WireBytes() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return compressor_->fp32WireBytes();
    }

    // Compresses `buffer` and queues its collective on `comm`: the compressor's state
    // is not for two threads at once (hooks of two models may share one state).
    std::unique_ptr<hostccl::PendingReduction> start(hostccl::Communicator& comm, std::span<float> buffer, size_t key) {
        std::lock_guard<std::mutex> lock(mutex_);
        return compressor_->start(comm, buffer, key);
    }

private:
    mutable std::mutex mutex_;
    std::unique_ptr<hostccl::GradientCompressor> compressor_;
};

}  // namespace hostccl::torch_backend
