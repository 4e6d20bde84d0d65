// Gradient bucketing: reduces gradients while backward is still running.
// SPDX-License-Identifier: Apache-2.0
//
//   hostccl::GradientBucketer buckets(comm);            // 1 MiB first bucket, then 25 MiB
//   for (Layer& l : layers | reverse) buckets.add(l.grad); // in the order backward makes them
//   ...backward: after each layer's gradient is written: buckets.ready(id);
//   buckets.waitAll();                                   // every gradient now holds the average
//   optimizer.step();
//
// Gradients are packed into buckets in the order they were added; a bucket is
// averaged (asynchronously, through its compressor) as soon as all its gradients are
// ready and every bucket before it has been launched, so all ranks launch the same
// collectives in the same order whatever order their gradients become ready in.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <span>
#include <vector>

#include "hostccl/compression.hpp"

namespace hostccl {
inline namespace v1 {

struct BucketOptions {
    size_t bucketBytes = size_t(25) << 20;
    size_t firstBucketBytes = size_t(1) << 20;  // small, so communication starts early
    bool overlap = true;  // false: launch nothing before waitAll (the no-overlap baseline)
};

class GradientBucketer {
public:
    // `compressor` null: plain fp32 allreduce.
    explicit GradientBucketer(Communicator& comm, BucketOptions options = {},
                              std::unique_ptr<GradientCompressor> compressor = nullptr);
    ~GradientBucketer();

    // Registers a gradient buffer (kept by reference); returns its id. Only before the
    // first ready() or waitAll(). Gradients of different `bucketGroup`s never share a
    // bucket: a compressor decides per bucket (top-k's threshold, sign's scale), so
    // tensors replicated across tensor-parallel ranks must not be bucketed with
    // shards, which differ between those ranks, or the replicas would diverge.
    size_t add(std::span<float> gradient, uint32_t bucketGroup = 0);
    // The gradient's values are final for this step; from any thread, once per step.
    // May throw when the bucket it completes cannot be launched (a failed
    // communicator); waitAll() then throws as well and resets the step.
    void ready(size_t id);
    // Launches what is left (gradients never marked ready are reduced as they are),
    // waits, and writes each gradient's average back in place. Then the next step can
    // begin. On a failure it waits for every op in flight, throws the first failure's
    // Error and leaves the gradients unspecified; the next step starts clean.
    void waitAll();

    struct StepStats {
        double exposedMs = 0;     // time waitAll() spent waiting for communication
        double commMs = 0;        // time the collectives ran
        uint64_t wireBytes = 0;   // this step's bytes sent by this rank (see GradientCompressor)
    };
    const StepStats& lastStep() const { return last_; }
    size_t bucketCount() const { return buckets_.size(); }
    const GradientCompressor& compressor() const { return *compressor_; }

private:
    struct Bucket;
    void build();
    void launchReady();       // these three with mutex_ held
    StepStats finishStep();   // waits bucket by bucket, unpacks; throws a failure
    void resetStep();

    Communicator& comm_;
    BucketOptions options_;
    std::unique_ptr<GradientCompressor> compressor_;
    std::vector<std::span<float>> grads_;
    std::vector<uint32_t> groupOf_;
    std::vector<size_t> bucketOf_, offsetOf_;
    std::vector<std::unique_ptr<Bucket>> buckets_;
    std::vector<bool> readyThisStep_;
    size_t nextLaunch_ = 0;
    uint64_t wireMark_ = 0;  // the compressor's byte count when the step began
    std::mutex mutex_;
    StepStats last_;
};

}  // namespace v1
}  // namespace hostccl
