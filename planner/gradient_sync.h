// Data-parallel gradient averaging on one pipeline stage: gradients packed into
// buckets as hostccl::GradientBucketer packs them, each bucket's collective (as its
// compressor runs it, with the compressor's own passes over the data) timed by the
// simulator, and the buckets laid on the backward pass's timeline as the bucketer
// runs them: a bucket is launched on the training thread when its last gradient is
// ready (its copy and encoding delay the rest of the backward), its collective runs
// on the stream after the bucket before it, and the step's wait finishes each in
// turn on the training thread (decoding, the average copied back).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "planner/codec_rates.h"
#include "planner/comm_estimator.h"

namespace hostccl::plan {

// A compressor as the bucketer runs it (hostccl::makeCompressor's specs).
struct Compression {
    enum Kind { None, Fp16, Bf16, TopK, Sign } kind = None;
    double ratio = 0.01;  // top-k's share of entries kept
};
// False and `why` for anything makeCompressor would refuse.
bool parseCompression(const std::string& spec, Compression* out, std::string* why);

struct Gradient {
    uint64_t bytes = 0;     // fp32
    double readyAt = 0;     // seconds into the last micro-batch's backward
    uint32_t group = 0;     // bucket group: shards and replicated tensors never share a bucket
};

struct SyncOptions {
    uint64_t bucketBytes = 0, firstBucketBytes = 0;
    Compression compression;
    bool overlap = true;
    double backwardSeconds = 0;  // when the last micro-batch's backward ends
    // Seconds for a pass of the bucketer or compressor that reads and writes `bytes`
    // in all (element-wise loops on the rank's share of a core: in cache or from
    // memory by its size; empty: free), and per byte of received data added in.
    std::function<double(double bytes)> passSeconds;
    double reduceSecondsPerByte = 0;
    double perCollective = 0;  // added to each bucket's collective (a crowded host's sync)
    // The group is on one host: its collectives move bytes with its ranks' cores
    // (shared memory), so on a crowded host they take core time from compute.
    bool collectiveOnCores = false;
    // The compressors' own work: measured rates (on one idle core) and what that
    // becomes on this rank (its core share, the host's slowdown).
    CodecRates codecs;
    std::function<double(double idleSeconds)> onRank;
    // Measured instead (ModelSpec::compressionOverheadSeconds): the compressor's own
    // work per fp32 gradient byte on one idle core, as a framework's hook does it on
    // one rank (< 0: not measured). Half is charged at launch, half at finish; the
    // other ranks' payloads decoded come on top at the codec rates.
    double hookSecondsPerByte = -1;
    // ... measured as wall time on this cluster's hosts with all their ranks training
    // (ModelSpec::MeasuredSharing): charged as it is, the others' payloads included.
    bool hookMeasuredHere = false;
    // The framework's own bucket work (gradients copied in and scaled by 1/n, the
    // average copied back) is in the model's measured step overhead (DDP timed over a
    // one-rank group: ModelSpec::dataParallelInStepOverhead): not charged again here.
    bool bucketCopiesMeasured = false;
};

struct SyncResult {
    double exposedSeconds = 0;  // from the end of backward to the last bucket's end
    double commSeconds = 0;     // every bucket's time, hidden or not
    // Of that, the rank's core time: launch and finish work, and the collectives
    // when they run on the cores (SyncOptions::collectiveOnCores).
    double coreSeconds = 0;
    uint64_t wireBytes = 0;     // sent by one rank, as bandwidth-optimal algorithms send
    uint64_t extraMemory = 0;   // bucket buffers, residuals, gathered payloads
    uint32_t buckets = 0;
};

// `gradients` in the order backward finishes them.
SyncResult simulateGradientSync(CommEstimator& comm, const GroupLayout& dp, const std::vector<Gradient>& gradients,
                                const SyncOptions& o);

}  // namespace hostccl::plan
