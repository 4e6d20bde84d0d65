#include "planner/plan_file.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "planner/step_model.h"

namespace hostccl::plan {

using nlohmann::json;

namespace {
double ms(double s) { return s * 1e3; }
double mibOf(uint64_t b) { return double(b) / (1 << 20); }
}  // namespace

std::string rankedTable(const PlanReport& r, size_t rows) {
    std::string out = fmt::format("{:>4}  {:<54} {:>9} {:>9} {:>8} {:>8} {:>8} {:>9} {:>8} {:>10} {:>9}\n", "rank",
                                  "plan", "step_ms", "compute", "tp", "p2p", "bubble", "dp_expo", "optim", "mem_MiB",
                                  "wire_MiB");
    const auto& plans = r.result->plans;
    for (size_t i = 0; i < plans.size() && i < rows; ++i) {
        const Prediction& p = plans[i].prediction;
        out += fmt::format("{:>4}  {:<54} {:>9.3f} {:>9.3f} {:>8.3f} {:>8.3f} {:>8.3f} {:>9.3f} {:>8.3f} {:>10.1f} {:>9.2f}{}\n",
                           i + 1, planLabel(plans[i].plan), ms(p.stepSeconds), ms(p.computeSeconds), ms(p.tpSeconds),
                           ms(p.p2pSeconds), ms(p.bubbleSeconds), ms(p.dpExposedSeconds), ms(p.optimizerSeconds),
                           mibOf(p.memoryBytes),
                           mibOf(p.wireBytes), lossyCompression(plans[i].plan.compression) ? "  (lossy)" : "");
    }
    return out;
}

std::string planFileJson(const PlanReport& r) {
    json plans = json::array();
    size_t rank = 0;
    for (const RankedPlan& rp : r.result->plans) {
        const Plan& p = rp.plan;
        const Prediction& q = rp.prediction;
        plans.push_back({{"rank", ++rank},
                         {"label", planLabel(p)},
                         {"dp", p.dp},
                         {"tp", p.tp},
                         {"pp", p.pp},
                         {"micro_batches", p.microBatches},
                         {"bucket_bytes", p.bucketBytes},
                         {"first_bucket_bytes", p.firstBucketBytes},
                         {"compression", p.compression},
                         {"lossy", lossyCompression(p.compression)},
                         {"overlap", p.overlap},
                         {"stage_starts", q.stageStarts},
                         {"predicted",
                          {{"step_ms", ms(q.stepSeconds)},
                           {"compute_ms", ms(q.computeSeconds)},
                           {"tp_ms", ms(q.tpSeconds)},
                           {"p2p_ms", ms(q.p2pSeconds)},
                           {"bubble_ms", ms(q.bubbleSeconds)},
                           {"dp_exposed_ms", ms(q.dpExposedSeconds)},
                           {"optimizer_ms", ms(q.optimizerSeconds)},
                           {"dp_comm_ms", ms(q.dpCommSeconds)},
                           {"memory_bytes", q.memoryBytes},
                           {"wire_bytes", q.wireBytes}}}});
    }
    const Workload& w = *r.workload;
    json doc = {{"version", 1},
                {"model", w.model.name},
                {"global_batch", w.globalBatch},
                {"memory_limit_bytes", w.memoryLimit},
                {"ranks", r.cluster->ranks()},
                {"cluster", r.cluster->platform.summary()},
                {"compute", r.cluster->gemm.summary()},
                {"elementwise", r.cluster->elementwise.summary("element-wise on one core", "GB/s", "MB")},
                {"sync_extra_us", r.cluster->syncFixed() * 1e6},
                {"sync_ramp_us", r.cluster->crowded() ? r.cluster->syncRampSeconds * 1e6 : 0.0},
                {"sync_floor_us", r.cluster->crowded() ? r.cluster->syncFloorSeconds * 1e6 : 0.0},
                {"sync_extra_per_compute", r.cluster->crowded() ? r.cluster->syncExtraPerCompute : 0.0},
                {"handoff_us", r.cluster->crowded() ? r.cluster->handoffSeconds * 1e6 : 0.0},
                {"compute_slowdown", r.cluster->computeSlowdown},
                {"compute_slowdown_one_sample", r.cluster->oneSampleSlowdown > 0 ? r.cluster->oneSampleSlowdown
                                                                                  : r.cluster->computeSlowdown},
                {"cores_pooled", r.cluster->coresPooled},
                {"considered", r.result->considered},
                {"over_memory", r.result->overMemory},
                {"equivalent", r.result->equivalent},
                {"compression_min_gain_pct", r.result->compressionMinGain * 100},
                {"plans", plans}};
    return doc.dump(2) + "\n";
}


}  // namespace hostccl::plan
