// One training plan (how the ranks are split and how gradients travel), what the
// planner predicts for it, and what it is planned for (the workload and cluster).
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "planner/codec_rates.h"
#include "planner/compute_rate.h"
#include "planner/gemm_timer.h"
#include "planner/model_spec.h"
#include "sim/platform.h"

namespace hostccl::plan {

struct Plan {
    uint32_t dp = 1, tp = 1, pp = 1;
    uint32_t microBatches = 1;  // per step and data-parallel replica
    uint64_t bucketBytes = uint64_t(25) << 20;
    uint64_t firstBucketBytes = uint64_t(1) << 20;
    std::string compression = "none";  // none, fp16, bf16, topk[:ratio], sign
    bool overlap = true;               // buckets launched while backward runs
    // The first layer of each pipeline stage, as the prediction cut them (read back
    // from a plan file; the search leaves it empty and predicts it).
    std::vector<uint32_t> stageStarts;
};

struct Prediction {
    double stepSeconds = 0;
    // The parts, on the slowest pipeline stage (they add up to the step):
    double computeSeconds = 0;    // GEMMs, forward and backward, every micro-batch
    double tpSeconds = 0;         // tensor-parallel allreduces (they block compute)
    double p2pSeconds = 0;        // activations and their gradients between stages
    double bubbleSeconds = 0;     // the pipeline filling and draining
    double dpExposedSeconds = 0;  // gradient averaging not hidden behind backward
    double optimizerSeconds = 0;  // the optimizer's pass over the stage's parameters
    double dpCommSeconds = 0;     // gradient averaging in all (hidden or not)
    uint64_t memoryBytes = 0;     // per rank, the fullest stage
    uint64_t wireBytes = 0;       // sent per rank per step, the busiest stage
    std::vector<uint32_t> stageStarts;  // the first layer of each pipeline stage
};

struct Workload {
    ModelSpec model;
    uint64_t globalBatch = 0;   // samples per step across all data-parallel replicas
    uint64_t memoryLimit = 0;   // bytes per rank (0: no limit)
};

struct Cluster {
    sim::Platform platform;  // hosts x ranks per host, links, cores, copy and reduce rates
    GemmTimer gemm;          // one core's GEMM time by shape
    // Bytes per second one core reads and writes in element-wise loops, by the
    // bytes of one pass (empty: such work is free); also the rate of the optimizer's,
    // bucketer's and compressors' passes.
    ComputeRate elementwise;
    // On a host running more ranks than cores: what a collective between compute
    // phases costs beyond the op (crowding_probe.h; 0: not known, not charged), and
    // what it costs more per second of the rank's compute since its last one.
    double syncExtraSeconds = 0;
    double syncExtraPerCompute = 0;
    // The fixed part grows in over this much of the rank's compute since its last
    // collective (the probe's short interval; 0: whole at once), from what one costs
    // with no compute since (`syncFloorSeconds`, beyond the op): ranks that computed
    // little since meet more in step (4 x 2 ranks on 2 cores, 64 micro-batches of
    // one sample: 0.84 ms charged to each of 512 TP allreduces a step made it 57 %
    // too slow), but on a host of 4 ranks to a core each still waits for the others
    // to be scheduled (8 ranks, 32 micro-batches of TP-8: 46 ms predicted from none,
    // 108 measured).
    double syncRampSeconds = 0;
    double syncFloorSeconds = 0;
    // And what a pipeline adds there per hand-off while it fills and drains.
    double handoffSeconds = 0;
    // How much slower a rank computes with every rank of its host computing too than
    // alone, beyond sharing cores (crowding_probe.h; 1: not known, or none measured).
    double computeSlowdown = 1;
    // ... that for micro-batches of `slowdownSamples` (the model's processes measured
    // it there), and this for micro-batches of one sample (0: not measured, the one
    // figure for all): in between, in proportion to the samples.
    double oneSampleSlowdown = 0;
    double slowdownSamples = 0;
    // The cluster as a plan of `samples` per micro-batch computes on it.
    Cluster forMicroBatch(uint64_t samples) const;
    // The cluster as ranks meet it when at most `ranks` of a core group run at once
    // (a pipeline with fewer micro-batches than stages never has every stage
    // running): the sync costs, probed with every rank running, scaled by how far
    // past its cores the group is then crowded, none at one rank a core or fewer.
    Cluster withRunningAtOnce(uint32_t ranks) const;
    bool sharingKnown = false;  // the figures above were probed or given
    bool sharingFromModel = false;  // ... measured with the model's own processes (its file's host_sharing)
    // The hosts run on one machine's cores (emulated hosts, as bench/planner's
    // namespace hosts): a rank waiting on one host leaves its core to the others'.
    bool coresPooled = false;
    CodecRates codecs;  // top-k's and sign's own work (not measured: from the element-wise rates)
    uint32_t ranks() const { return platform.ranks(); }
    // The part of a core each rank gets when every rank on a host computes at once.
    double coreShare() const;
    // Seconds of compute one rank needs for what takes `alone` on an idle core.
    double computeSeconds(double alone) const { return alone * computeSlowdown / coreShare(); }
    bool crowded() const { return coreShare() < 1; }
    // The groups of ranks that share cores: each host's, or with pooled cores every
    // rank; consecutive slots, `ranks` to a group, on `cores` cores.
    struct CoreGroups {
        uint32_t groups, ranks;
        double cores;
    };
    CoreGroups coreGroups() const;
    // Added to a collective after `computeSince` seconds of the rank's compute (0
    // on a host not crowded).
    double syncExtra(double computeSince) const {
        const double ramp = syncRampSeconds > computeSince ? computeSince / syncRampSeconds : 1;
        const double floor = std::min(syncFloorSeconds, syncExtraSeconds);
        const double extra = floor + (syncExtraSeconds - floor) * ramp + syncExtraPerCompute * computeSince;
        return crowded() ? syncCrowding * extra : 0;
    }
    // The fixed part alone, whatever the compute before (hand-offs, bucket collectives).
    double syncFixed() const { return crowded() ? syncCrowding * syncExtraSeconds : 0; }
    // The part of the probed crowding the sync costs meet (withRunningAtOnce).
    double syncCrowding = 1;
    // Seconds one rank spends on `bytes` of element-wise work done in passes of
    // `passBytes` each (at its core share).
    double elementwiseSeconds(double bytes, double passBytes) const;
    // The same for data out of cache (the bucketer's and optimizer's passes: the
    // step's GEMMs have streamed through the caches since the gradients were
    // written), at the rate of the largest measured pass.
    double coldElementwiseSeconds(double bytes) const {
        return elementwiseSeconds(bytes, std::numeric_limits<double>::infinity());
    }
};

// "dp2 tp2 pp1 mb4 bucket 25M/1M fp16 overlap"
std::string planLabel(const Plan& p);
// Lossy compressors change what the model learns (top-k, sign); casts round.
bool lossyCompression(const std::string& spec);

}  // namespace hostccl::plan
