// The compressors behind makeCompressor(); each file in this directory is one.
#pragma once

#include <functional>
#include <map>
#include <vector>

#include "hostccl/compression.hpp"

namespace hostccl {
inline namespace v1 {
namespace compression {

class Fp32AllReduce : public GradientCompressor {
public:
    std::string name() const override { return "none"; }
    std::unique_ptr<PendingReduction> start(Communicator& comm, std::span<float> buffer, size_t key) override;
};

class CastAllReduce : public GradientCompressor {
public:
    explicit CastAllReduce(HcclDataType dtype) : dtype_(dtype) {}
    std::string name() const override { return dtype_ == HCCL_DATA_TYPE_FP16 ? "fp16" : "bf16"; }
    std::unique_ptr<PendingReduction> start(Communicator& comm, std::span<float> buffer, size_t key) override;

private:
    HcclDataType dtype_;
    std::map<size_t, std::vector<uint16_t>> staging_;  // per bucket: reused every step
};

// Error feedback: what a rank did not send is added to its next step's buffer. Per
// bucket it also keeps the encoded message and the gathered ones, reused every step
// (fresh buffers cost their zeroing and page faults each time): a bucket's reduction
// must be finished before the same key starts again, as the bucketer does.
class ErrorFeedback {
protected:
    struct KeyState {
        std::vector<float> residual;
        std::vector<uint32_t> sent, gathered;  // words; a message may end mid-word
    };
    KeyState& state(size_t key, size_t n);  // the residual zeroed the first time
    static uint8_t* bytes(std::vector<uint32_t>& words, size_t count) {
        words.resize((count + 3) / 4);
        return reinterpret_cast<uint8_t*>(words.data());
    }

private:
    std::map<size_t, KeyState> states_;
};

class TopKCompressor : public GradientCompressor, ErrorFeedback {
public:
    explicit TopKCompressor(double ratio) : ratio_(ratio) {}
    std::string name() const override;
    std::unique_ptr<PendingReduction> start(Communicator& comm, std::span<float> buffer, size_t key) override;

private:
    double ratio_;
};

class SignCompressor : public GradientCompressor, ErrorFeedback {
public:
    std::string name() const override { return "sign"; }
    std::unique_ptr<PendingReduction> start(Communicator& comm, std::span<float> buffer, size_t key) override;
};

// A pending collective whose result a function turns into the average.
class WorkThen : public PendingReduction {
public:
    template <typename F>
    WorkThen(Work work, F&& then) : work_(std::move(work)), then_(std::forward<F>(then)) {}
    void finish() override {
        work_.wait();
        then_();
    }
    double runMs() const override { return work_.runMs(); }
    Work collective() const override { return work_; }

private:
    Work work_;
    std::function<void()> then_;
};

}  // namespace compression
}  // namespace v1
}  // namespace hostccl
