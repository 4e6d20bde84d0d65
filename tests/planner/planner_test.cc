// The planner's parts against exact expectations: the model file's checks, the
// stage cut (against brute force), a plan's checks, predictions whose parts must
// add up and whose simple cases have closed forms, and the search's ranking,
// memory limit and collapsing of choices that change nothing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <random>

#include "planner/codec_rates.h"
#include "planner/gradient_sync.h"
#include "planner/plan_file.h"
#include "planner/plan_reader.h"
#include "planner/stages.h"
#include "planner/step_model.h"

using namespace hostccl;
using namespace hostccl::plan;

namespace {

const char* kModel = R"({
  "name": "toy", "dtype_bytes": 4, "optimizer_state_per_param": 1,
  "layers": [
    {"name": "in",  "params": 1000,   "forward_flops": 2000,   "activation_bytes": 400,  "tp": "replicated"},
    {"name": "a0",  "params": 400000, "forward_flops": 800000, "activation_bytes": 4000, "tp": "column"},
    {"name": "b0",  "params": 400000, "forward_flops": 800000, "activation_bytes": 400,  "tp": "row"},
    {"name": "a1",  "params": 400000, "forward_flops": 800000, "activation_bytes": 4000, "tp": "column"},
    {"name": "b1",  "params": 400000, "forward_flops": 800000, "activation_bytes": 400,  "tp": "row"},
    {"name": "out", "params": 1010,   "forward_flops": 2020,   "activation_bytes": 40, "elementwise_bytes": 360}
  ]})";

ModelSpec toyModel() {
    ModelSpec m;
    std::string why;
    EXPECT_TRUE(parseModel(kModel, &m, &why)) << why;
    return m;
}

// 2 hosts x 4 ranks, cores enough for every rank, a flat GEMM rate of 10 GFLOP/s.
Cluster toyCluster(uint32_t hosts = 2, uint32_t perHost = 4) {
    Cluster c;
    c.platform = sim::fromCostParams(CostParams::defaults(), hosts, perHost, 0, LinkClass::Tcp);
    c.gemm = GemmTimer::flat(10e9);
    return c;
}

// 4 ranks on a host of 2 cores: crowded.
Cluster crowdedToyCluster() {
    Cluster c = toyCluster(1, 4);
    EXPECT_TRUE(sim::setCores(&c.platform, 2));
    return c;
}

std::string parseError(const std::string& json) {
    ModelSpec m;
    m.name = "untouched";
    std::string why;
    EXPECT_FALSE(parseModel(json, &m, &why)) << json;
    EXPECT_EQ(m.name, "untouched");  // nothing changed on failure
    return why;
}

}  // namespace

TEST(PlannerModel, ReadsLayersAndTotals) {
    const ModelSpec m = toyModel();
    ASSERT_EQ(m.layers.size(), 6u);
    EXPECT_EQ(m.parameterCount(), 1000u + 4 * 400000u + 1010u);
    EXPECT_DOUBLE_EQ(m.forwardFlopsPerSample(), 2000.0 + 4 * 800000.0 + 2020.0);
    EXPECT_EQ(m.layers[1].tp, TpSplit::Column);
    EXPECT_EQ(m.layers[2].tp, TpSplit::Row);
    EXPECT_EQ(m.layers[5].tp, TpSplit::Replicated);  // the default
    EXPECT_EQ(m.layers[5].elementwiseBytes, 360u);
    EXPECT_EQ(m.layers[4].elementwiseBytes, 0u);  // the default
    EXPECT_EQ(m.optimizerStatePerParam, 1.0);
    EXPECT_EQ(m.stepOverheadSeconds, 0.0);  // not measured
    ModelSpec again;
    std::string why;
    ASSERT_TRUE(parseModel(modelJson(m), &again, &why)) << why;
    EXPECT_EQ(modelJson(again), modelJson(m));
}

TEST(PlannerModel, NamesTheBadField) {
    EXPECT_EQ(parseError("{"), "not valid JSON");
    EXPECT_EQ(parseError(R"({"name": "x"})"), "layers: missing");
    EXPECT_EQ(parseError(R"({"layers": []})"), "layers: must be a non-empty array");
    EXPECT_EQ(parseError(R"({"layers": [{"params": 1, "forward_flops": 2, "activation_bytes": 4},
                                         {"params": 1, "activation_bytes": 4}]})"),
              "layers[1].forward_flops: missing");
    EXPECT_EQ(parseError(R"({"layers": [{"params": -1, "forward_flops": 2, "activation_bytes": 4}]})"),
              "layers[0].params: must be at least 0 (got -1)");
    EXPECT_EQ(parseError(R"({"layers": [{"params": 1.5, "forward_flops": 2, "activation_bytes": 4}]})"),
              "layers[0].params: must be a whole number (got 1.5)");
    EXPECT_EQ(parseError(R"({"layers": [{"params": 1, "forward_flops": "many", "activation_bytes": 4}]})"),
              "layers[0].forward_flops: must be a number");
    EXPECT_EQ(parseError(R"({"layers": [{"params": 1, "forward_flops": 2, "activation_bytes": 4, "tp": "diagonal"}]})"),
              "layers[0].tp: must be \"replicated\", \"column\" or \"row\"");
    EXPECT_EQ(parseError(R"({"dtype_bytes": 0, "layers": [{"params": 1, "forward_flops": 2, "activation_bytes": 4}]})"),
              "dtype_bytes: must be at least 1 (got 0)");
    EXPECT_EQ(parseError(R"({"layers": [{"params": 1, "forward_flops": 2, "activation_bytes": 4, "elementwise_bytes": -8}]})"),
              "layers[0].elementwise_bytes: must be at least 0 (got -8)");
    EXPECT_EQ(parseError(R"({"layers": [{"params": 1, "forward_flops": 0, "activation_bytes": 4}]})"),
              "layers: every forward_flops is 0 (nothing to compute)");
    EXPECT_EQ(parseError(R"({"step_overhead_seconds": "slow", "layers": [{"params": 1, "forward_flops": 2, "activation_bytes": 4}]})"),
              "step_overhead_seconds: must be a number");
    const std::string layer = R"("layers": [{"params": 1, "forward_flops": 2, "activation_bytes": 4}])";
    EXPECT_EQ(parseError(R"({"compression_overhead_seconds": 0.1, )" + layer + "}"),
              "compression_overhead_seconds: must be an object of compression -> seconds");
    EXPECT_EQ(parseError(R"({"compression_overhead_seconds": {"none": 0.1}, )" + layer + "}"),
              "compression_overhead_seconds.none: not a compressor (fp16, bf16, topk[:ratio], sign)");
    EXPECT_EQ(parseError(R"({"compression_overhead_seconds": {"fp16": -0.1}, )" + layer + "}"),
              "compression_overhead_seconds.fp16: must be a number >= 0");
    EXPECT_NE(parseError(R"({"compression_overhead_seconds": {"lz4": 0.1}, )" + layer + "}")
                  .find("compression_overhead_seconds.lz4: not a compressor"),
              std::string::npos);
}

// A compressor's work measured as a framework's hook runs it, by compression spec:
// read and written back, found however the spec is written, absent for others.
TEST(PlannerModel, CompressionOverheadsByCompressor) {
    ModelSpec m;
    std::string why;
    ASSERT_TRUE(parseModel(R"({"compression_overhead_seconds": {"fp16": 0.002, "topk:0.01": 0.003},
                               "layers": [{"params": 1, "forward_flops": 2, "activation_bytes": 4}]})",
                           &m, &why))
        << why;
    EXPECT_EQ(m.compressionOverhead("fp16"), 0.002);
    EXPECT_EQ(m.compressionOverhead("topk:0.010"), 0.003);
    EXPECT_EQ(m.compressionOverhead("topk:0.05"), -1);  // another ratio: not measured
    EXPECT_EQ(m.compressionOverhead("bf16"), -1);
    EXPECT_EQ(m.compressionOverhead("none"), -1);
    ModelSpec again;
    ASSERT_TRUE(parseModel(modelJson(m), &again, &why)) << why;
    EXPECT_EQ(again.compressionOverheadSeconds, m.compressionOverheadSeconds);
    EXPECT_EQ(modelJson(toyModel()).find("compression_overhead_seconds"), std::string::npos);  // none measured, none written
}

// The fixed cost of a micro-batch measured by its samples: read, interpolated between
// the sizes measured, the nearest beyond them, written back; bad keys and values named.
TEST(PlannerModel, MicroBatchOverheadBySamples) {
    const std::string layer = R"("layers": [{"params": 1, "forward_flops": 2, "activation_bytes": 4}])";
    ModelSpec m;
    std::string why;
    ASSERT_TRUE(parseModel(R"({"micro_batch_overhead_seconds": 0.5,
                               "micro_batch_overhead_by_samples": {"2": 0.003, "1": 0.001, "8": 0.002}, )" + layer + "}",
                           &m, &why))
        << why;
    EXPECT_EQ(m.microBatchOverhead(1), 0.001);
    EXPECT_EQ(m.microBatchOverhead(2), 0.003);
    EXPECT_DOUBLE_EQ(m.microBatchOverhead(5), 0.0025);  // halfway from 2 to 8
    EXPECT_EQ(m.microBatchOverhead(8), 0.002);
    EXPECT_EQ(m.microBatchOverhead(64), 0.002);  // beyond the sizes measured: the largest's
    ModelSpec again;
    ASSERT_TRUE(parseModel(modelJson(m), &again, &why)) << why;
    EXPECT_EQ(again.microBatchOverheadBySamples, m.microBatchOverheadBySamples);
    const ModelSpec toy = toyModel();
    EXPECT_EQ(toy.microBatchOverhead(4), toy.microBatchOverheadSeconds);  // no table: the one figure
    EXPECT_EQ(modelJson(toy).find("micro_batch_overhead_by_samples"), std::string::npos);
    const std::string key = R"({"micro_batch_overhead_by_samples": )";
    EXPECT_EQ(parseError(key + "0.1, " + layer + "}"),
              "micro_batch_overhead_by_samples: must be a non-empty object of samples -> seconds");
    EXPECT_EQ(parseError(key + "{}, " + layer + "}"),
              "micro_batch_overhead_by_samples: must be a non-empty object of samples -> seconds");
    for (const char* bad : {"0", "two", "-1", "1.5", "99999999999999"})
        EXPECT_EQ(parseError(key + "{\"" + bad + "\": 0.1}, " + layer + "}"),
                  std::string("micro_batch_overhead_by_samples.") + bad +
                      ": the key must be a whole number of samples, at least 1");
    EXPECT_EQ(parseError(key + R"({"4": -0.1}, )" + layer + "}"), "micro_batch_overhead_by_samples.4: must be a number >= 0");
    EXPECT_EQ(parseError(key + R"({"4": "slow"}, )" + layer + "}"), "micro_batch_overhead_by_samples.4: must be a number >= 0");
}

// What the model's own processes cost each other on one host: read with every field
// required and named when wrong, written back, absent when not measured.
TEST(PlannerModel, HostSharingMeasuredWithTheModel) {
    const std::string layer = R"("layers": [{"params": 1, "forward_flops": 2, "activation_bytes": 4}])";
    const std::string sharing = R"("host_sharing": {"ranks_per_host": 8, "cores": 2, "compute_slowdown": 1.5,
        "sync_base_seconds": 0.002, "sync_per_compute": 0.4, "sync_short_compute_seconds": 0.0014,
        "sync_floor_seconds": 0.0006, "backend": "hostccl"}, )";
    ModelSpec m;
    std::string why;
    ASSERT_TRUE(parseModel("{" + sharing + layer + "}", &m, &why)) << why;
    EXPECT_EQ(m.hostSharing.ranksPerHost, 8u);
    EXPECT_EQ(m.hostSharing.cores, 2.0);
    const HostSharing& f = m.hostSharing.figures;
    EXPECT_EQ(f.computeSlowdown, 1.5);
    EXPECT_EQ(f.syncBase, 0.002);
    EXPECT_EQ(f.syncPerCompute, 0.4);
    EXPECT_EQ(f.syncShortCompute, 0.0014);
    EXPECT_EQ(f.syncFloor, 0.0006);
    EXPECT_EQ(f.handoff, 0.0);  // not measured by the model's processes
    ModelSpec again;
    ASSERT_TRUE(parseModel(modelJson(m), &again, &why)) << why;
    EXPECT_EQ(again.hostSharing.ranksPerHost, 8u);
    EXPECT_EQ(again.hostSharing.cores, 2.0);
    EXPECT_EQ(again.hostSharing.figures.syncPerCompute, 0.4);
    EXPECT_EQ(again.hostSharing.figures.syncFloor, 0.0006);
    EXPECT_EQ(toyModel().hostSharing.ranksPerHost, 0u);
    EXPECT_EQ(modelJson(toyModel()).find("host_sharing"), std::string::npos);  // none measured, none written

    EXPECT_EQ(parseError(R"({"host_sharing": 8, )" + layer + "}"), "host_sharing: must be an object");
    auto without = [&](const std::string& field) {
        std::string text = "{" + sharing + layer + "}";
        const size_t at = text.find("\"" + field + "\"");
        text.erase(at, text.find(',', at) + 1 - at);
        return parseError(text);
    };
    for (const char* field : {"ranks_per_host", "cores", "compute_slowdown", "sync_base_seconds", "sync_per_compute",
                              "sync_short_compute_seconds", "sync_floor_seconds"})
        EXPECT_EQ(without(field), std::string("host_sharing.") + field + ": missing");
    auto with = [&](const std::string& from, const std::string& to) {
        std::string text = "{" + sharing + layer + "}";
        text.replace(text.find(from), from.size(), to);
        return parseError(text);
    };
    EXPECT_EQ(with(R"("ranks_per_host": 8)", R"("ranks_per_host": 1)"), "host_sharing.ranks_per_host: must be at least 2 (got 1)");
    EXPECT_EQ(with(R"("ranks_per_host": 8)", R"("ranks_per_host": 2.5)"),
              "host_sharing.ranks_per_host: must be a whole number (got 2.5)");
    EXPECT_EQ(with(R"("compute_slowdown": 1.5)", R"("compute_slowdown": 0.5)"),
              "host_sharing.compute_slowdown: must be at least 1 (got 0.5)");
    EXPECT_EQ(with(R"("sync_per_compute": 0.4)", R"("sync_per_compute": -0.4)"),
              "host_sharing.sync_per_compute: must be at least 0 (got -0.4)");
    EXPECT_EQ(with(R"("cores": 2)", R"("cores": "two")"), "host_sharing.cores: must be a number");

    // The slowdown of one-sample passes and the samples it was measured against:
    // optional, together, written back.
    EXPECT_EQ(m.hostSharing.samples, 0u);
    EXPECT_EQ(modelJson(m).find("compute_slowdown_one_sample"), std::string::npos);
    const std::string oneSample = R"("sync_floor_seconds": 0.0006, "compute_slowdown_one_sample": 1.2, "samples": 8)";
    ASSERT_TRUE(parseModel("{" + std::string(sharing).replace(sharing.find(R"("sync_floor_seconds": 0.0006)"), 28, oneSample) +
                               layer + "}", &m, &why)) << why;
    EXPECT_EQ(m.hostSharing.oneSampleSlowdown, 1.2);
    EXPECT_EQ(m.hostSharing.samples, 8u);
    ASSERT_TRUE(parseModel(modelJson(m), &again, &why)) << why;
    EXPECT_EQ(again.hostSharing.oneSampleSlowdown, 1.2);
    EXPECT_EQ(again.hostSharing.samples, 8u);
    EXPECT_EQ(with(R"("sync_floor_seconds": 0.0006)", R"("sync_floor_seconds": 0.0006, "samples": 8)"),
              "host_sharing.compute_slowdown_one_sample: missing");
    EXPECT_EQ(with(R"("sync_floor_seconds": 0.0006)", R"("sync_floor_seconds": 0.0006, "compute_slowdown_one_sample": 1.2)"),
              "host_sharing.samples: missing");
    EXPECT_EQ(with(R"("sync_floor_seconds": 0.0006)", R"("sync_floor_seconds": 0.0006, "compute_slowdown_one_sample": 0.9, "samples": 8)"),
              "host_sharing.compute_slowdown_one_sample: must be at least 1 (got 0.9)");
    EXPECT_EQ(with(R"("sync_floor_seconds": 0.0006)", R"("sync_floor_seconds": 0.0006, "compute_slowdown_one_sample": 1.2, "samples": 0.5)"),
              "host_sharing.samples: must be at least 1 (got 0.5)");

    // What each comm hook adds there: optional, by compressor, named when wrong.
    EXPECT_TRUE(m.hostSharing.compressionOverheadSeconds.empty());
    EXPECT_EQ(modelJson(m).find("compression_overhead_seconds"), std::string::npos);
    const std::string hooks = R"("sync_floor_seconds": 0.0006, "compression_overhead_seconds": {"bf16": 0.002, "topk:0.01": 0.003})";
    std::string hooked = sharing;
    hooked.replace(hooked.find(R"("sync_floor_seconds": 0.0006)"), 28, hooks);
    ASSERT_TRUE(parseModel("{" + hooked + layer + "}", &m, &why)) << why;
    EXPECT_EQ(m.hostSharing.compressionOverhead("bf16"), 0.002);
    EXPECT_EQ(m.hostSharing.compressionOverhead("topk:0.010"), 0.003);
    EXPECT_EQ(m.hostSharing.compressionOverhead("fp16"), -1);
    EXPECT_EQ(m.compressionOverhead("bf16"), -1);  // the one-core figures are the model's own field
    ASSERT_TRUE(parseModel(modelJson(m), &again, &why)) << why;
    EXPECT_EQ(again.hostSharing.compressionOverheadSeconds, m.hostSharing.compressionOverheadSeconds);
    EXPECT_EQ(with(R"("sync_floor_seconds": 0.0006)", R"("sync_floor_seconds": 0.0006, "compression_overhead_seconds": {"zip": 1})"),
              "host_sharing.compression_overhead_seconds.zip: not a compressor (fp16, bf16, topk[:ratio], sign): "
              "compression 'zip': expected none, fp16, bf16, topk[:ratio] or sign");
    EXPECT_EQ(with(R"("sync_floor_seconds": 0.0006)", R"("sync_floor_seconds": 0.0006, "compression_overhead_seconds": {"fp16": -1})"),
              "host_sharing.compression_overhead_seconds.fp16: must be a number >= 0");
    EXPECT_EQ(with(R"("sync_floor_seconds": 0.0006)", R"("sync_floor_seconds": 0.0006, "compression_overhead_seconds": 1)"),
              "host_sharing.compression_overhead_seconds: must be an object of compression -> seconds");
}

TEST(PlannerStages, MatchesBruteForce) {
    EXPECT_EQ(balancedStages({1, 1, 1, 1, 4}, 2), (std::vector<uint32_t>{0, 4}));
    EXPECT_EQ(balancedStages({3, 3, 3}, 3), (std::vector<uint32_t>{0, 1, 2}));
    // No stage may begin at layer 4: the best cut left is worse.
    EXPECT_EQ(balancedStages({1, 1, 1, 1, 4}, 2, {true, true, true, true, false}), (std::vector<uint32_t>{0, 3}));
    EXPECT_TRUE(balancedStages({1, 1, 1}, 3, {true, false, true}).empty());  // only 2 stages possible
    std::mt19937 rng(7);
    for (int trial = 0; trial < 300; ++trial) {
        const size_t n = 1 + rng() % 7;
        const uint32_t k = 1 + rng() % n;
        std::vector<double> cost(n);
        for (double& c : cost) c = 1 + rng() % 9;
        std::vector<bool> cut(n, true);
        if (trial % 2 == 1)
            for (size_t i = 1; i < n; ++i) cut[i] = rng() % 3 != 0;
        auto worst = [&](const std::vector<uint32_t>& starts) {
            double m = 0;
            for (size_t s = 0; s < starts.size(); ++s) {
                const size_t end = s + 1 < starts.size() ? starts[s + 1] : n;
                double sum = 0;
                for (size_t i = starts[s]; i < end; ++i) sum += cost[i];
                m = std::max(m, sum);
            }
            return m;
        };
        // Every way to cut n layers into k non-empty runs.
        double best = std::numeric_limits<double>::infinity();
        std::vector<uint32_t> starts{0};
        std::function<void(uint32_t)> cutAll = [&](uint32_t from) {
            if (starts.size() == k) {
                best = std::min(best, worst(starts));
                return;
            }
            for (uint32_t next = from + 1; next + (k - starts.size()) <= n; ++next) {
                if (!cut[next]) continue;
                starts.push_back(next);
                cutAll(next);
                starts.pop_back();
            }
        };
        cutAll(0);
        const std::vector<uint32_t> got = balancedStages(cost, k, cut);
        if (best == std::numeric_limits<double>::infinity()) {  // no way to cut that many stages
            EXPECT_TRUE(got.empty());
            continue;
        }
        ASSERT_EQ(got.size(), k);
        for (uint32_t s : got) EXPECT_TRUE(s == 0 || cut[s]);
        EXPECT_EQ(got[0], 0u);
        EXPECT_TRUE(std::is_sorted(got.begin(), got.end()));
        EXPECT_DOUBLE_EQ(worst(got), best) << "n " << n << " k " << k;
    }
}

TEST(PlannerPlan, RefusesWhatCannotRun) {
    Workload w{toyModel(), 64, 0};
    const Cluster c = toyCluster();
    std::string why;
    Plan p;
    p.dp = 4, p.tp = 1, p.pp = 1;
    EXPECT_FALSE(checkPlan(w, c, p, &why));
    EXPECT_EQ(why, "dp 4 x tp 1 x pp 1 is not the 8 ranks");
    p.dp = 1, p.tp = 8;
    EXPECT_FALSE(checkPlan(w, c, p, &why));
    EXPECT_EQ(why, "tp 8 does not divide the 4 ranks per host (tensor parallelism stays inside hosts)");
    p.tp = 1, p.pp = 8;
    EXPECT_FALSE(checkPlan(w, c, p, &why));
    EXPECT_EQ(why, "pp 8 is more stages than the model's 6 layers can be cut into");
    p.dp = 8, p.pp = 1, w.globalBatch = 60;
    EXPECT_FALSE(checkPlan(w, c, p, &why));
    EXPECT_EQ(why, "the global batch 60 does not divide over dp 8");
    w.globalBatch = 64, p.microBatches = 3;
    EXPECT_FALSE(checkPlan(w, c, p, &why));
    EXPECT_EQ(why, "3 micro-batches do not divide the replica's batch of 8");
    p.microBatches = 2, p.compression = "zip";
    EXPECT_FALSE(checkPlan(w, c, p, &why));
    EXPECT_EQ(why, "compression 'zip': expected none, fp16, bf16, topk[:ratio] or sign");
    p.compression = "topk:0.1";
    EXPECT_TRUE(checkPlan(w, c, p, &why)) << why;
}

// One rank, nothing to communicate: the step is the GEMMs, forward and twice that
// backward (but the first layer's input needs no gradient), at the flat rate;
// memory is weights, gradients, optimizer state and the batch's activations.
TEST(PlannerPredict, OneRankIsItsGemmsAndMemory) {
    const Workload w{toyModel(), 32, 0};
    const Cluster c = toyCluster(1, 1);
    CommEstimator comm(c.platform);
    Plan p;
    const Prediction q = predictStep(w, c, comm, p);
    const double flops = (3 * w.model.forwardFlopsPerSample() - w.model.layers[0].forwardFlops) * 32;
    EXPECT_DOUBLE_EQ(q.stepSeconds, flops / 10e9);
    EXPECT_DOUBLE_EQ(q.computeSeconds, q.stepSeconds);
    EXPECT_EQ(q.tpSeconds + q.p2pSeconds + q.bubbleSeconds + q.dpExposedSeconds, 0.0);
    uint64_t activations = 0;
    for (const LayerSpec& l : w.model.layers) activations += l.activationBytes * 32;
    EXPECT_EQ(q.memoryBytes, w.model.parameterCount() * 4 * 3 + activations);
    EXPECT_EQ(q.wireBytes, 0u);
    EXPECT_EQ(comm.simulatedOps(), 0u);
}

// Measured layer times: every micro-batch pays the fixed cost measured at its size on
// top of its samples' time (8 samples: 1 ms a sample, forward and backward; 4 samples
// a third of the way from the 2-sample figure to the 8-sample one).
TEST(PlannerPredict, EachMicroBatchPaysTheFixedCostOfItsSize) {
    ModelSpec m;
    std::string why;
    ASSERT_TRUE(parseModel(R"({"micro_batch_overhead_seconds": 0.002,
        "micro_batch_overhead_by_samples": {"1": 0.001, "2": 0.004, "8": 0.002},
        "layers": [{"params": 10, "forward_flops": 20, "activation_bytes": 4, "forward_seconds": 1e-4, "backward_seconds": 2e-4},
                   {"params": 10, "forward_flops": 20, "activation_bytes": 4, "forward_seconds": 3e-4, "backward_seconds": 4e-4}]})",
                           &m, &why))
        << why;
    const Workload w{m, 8, 0};
    const Cluster c = toyCluster(1, 1);
    CommEstimator comm(c.platform);
    Plan p;
    const std::map<uint32_t, double> expected = {{1, 0.008 + 0.002}, {2, 0.008 + 2 * (0.004 - 0.002 * 2 / 6)}, {4, 0.008 + 4 * 0.004},
                                                 {8, 0.008 + 8 * 0.001}};
    for (const auto& [micro, seconds] : expected) {
        p.microBatches = micro;
        EXPECT_NEAR(predictStep(w, c, comm, p).computeSeconds, seconds, 1e-15) << micro << " micro-batches";
    }
}

// Ranks sharing a host: compute stretched by the measured slowdown over the core
// share; on a crowded host every collective pays the measured sync cost on top
// (tp 4 over the toy model: a0's and a1's backward, b0's and b1's forward).
TEST(PlannerPredict, SharedAndCrowdedHosts) {
    const Workload w{toyModel(), 32, 0};
    Cluster alone = toyCluster(1, 1);
    CommEstimator aloneComm(alone.platform);
    const double oneRank = predictStep(w, alone, aloneComm, Plan{}).stepSeconds;
    alone.computeSlowdown = 1.5;
    EXPECT_DOUBLE_EQ(predictStep(w, alone, aloneComm, Plan{}).stepSeconds, 1.5 * oneRank);

    Cluster c = crowdedToyCluster();
    ASSERT_TRUE(c.crowded());
    EXPECT_DOUBLE_EQ(c.coreShare(), 0.5);
    CommEstimator comm(c.platform);
    Plan p;
    p.tp = 4;
    const Prediction plain = predictStep(w, c, comm, p);
    c.syncExtraSeconds = 1e-3;
    const Prediction synced = predictStep(w, c, comm, p);
    EXPECT_NEAR(synced.tpSeconds - plain.tpSeconds, 4e-3, 1e-12);
    EXPECT_NEAR(synced.stepSeconds - plain.stepSeconds, 4e-3, 1e-12);
    EXPECT_DOUBLE_EQ(synced.computeSeconds, plain.computeSeconds);
    // And a part per second of the rank's compute since its previous TP allreduce
    // (each split layer's forward 0.64 ms on a core, 1.28 at half of one; `in`'s
    // forward 6.4 us, `out`'s backward 2 x 6.464 us): forward, in + a0 + b0 and
    // a1 + b1; backward, out + b1 + a1 and b0 + a0 (twice the forward each).
    c.syncExtraPerCompute = 0.1;
    const Prediction longer = predictStep(w, c, comm, p);
    const double split = 1.28e-3, in = 2 * 6.4e-6, outBackward = 2 * 2 * 6.464e-6;
    const double since = (in + 2 * split) + 2 * split + (outBackward + 4 * split) + 4 * split;
    EXPECT_NEAR(longer.tpSeconds - synced.tpSeconds, 0.1 * since, 1e-12);
    EXPECT_NEAR(longer.stepSeconds - synced.stepSeconds, 0.1 * since, 1e-12);
    // The fixed part grown in over 3 ms of compute since the last: the two forward
    // allreduces (2.57 and 2.56 ms since theirs) pay that part of it, the backward
    // ones (over 5 ms) all; hand-offs and bucket collectives the whole part still.
    c.syncRampSeconds = 3e-3;
    const Prediction ramped = predictStep(w, c, comm, p);
    const double first = in + 2 * split, second = 2 * split;
    EXPECT_NEAR(longer.tpSeconds - ramped.tpSeconds, 1e-3 * ((1 - first / 3e-3) + (1 - second / 3e-3)), 1e-12);
    EXPECT_EQ(c.syncExtra(0), 0.0);
    EXPECT_EQ(c.syncFixed(), 1e-3);
    // Grown in from what a collective costs with no compute since (the probe's floor),
    // never beyond the fixed part; the part per second of compute comes on top.
    c.syncFloorSeconds = 0.4e-3;
    EXPECT_DOUBLE_EQ(c.syncExtra(0), 0.4e-3);
    EXPECT_DOUBLE_EQ(c.syncExtra(1.5e-3), 0.4e-3 + 0.6e-3 * 0.5 + 0.1 * 1.5e-3);
    EXPECT_DOUBLE_EQ(c.syncExtra(4e-3), 1e-3 + 0.1 * 4e-3);
    const Prediction floored = predictStep(w, c, comm, p);
    EXPECT_NEAR(floored.tpSeconds - ramped.tpSeconds, 0.4e-3 * ((1 - first / 3e-3) + (1 - second / 3e-3)), 1e-12);
    c.syncFloorSeconds = 2e-3;
    EXPECT_DOUBLE_EQ(c.syncExtra(0), 1e-3);
    c.syncFloorSeconds = 0;
    // Not crowded: no sync cost.
    ASSERT_TRUE(sim::setCores(&c.platform, 4));
    EXPECT_EQ(c.syncExtra(1.0), 0.0);
}

// On a crowded host the gradient averaging that overlap hides from the step on
// cores of its own takes the cores' time from compute: data parallel on one host
// (its shared-memory collectives run on the ranks' cores; the toy has no
// element-wise rates, so the bucketer's passes are free) takes the compute plus
// every bucket's collective; with a core per rank, less.
TEST(PlannerPredict, CrowdedHostSpendsItsCoresOnHiddenAveraging) {
    const Workload w{toyModel(), 32, 0};
    Cluster c = toyCluster(1, 4);
    Plan p;
    p.dp = 4;
    p.bucketBytes = p.firstBucketBytes = 1 << 20;
    ASSERT_TRUE(sim::setCores(&c.platform, 4));
    CommEstimator roomy(c.platform);
    const Prediction spread = predictStep(w, c, roomy, p);
    EXPECT_LT(spread.dpExposedSeconds, spread.dpCommSeconds);
    ASSERT_TRUE(sim::setCores(&c.platform, 2));
    CommEstimator comm(c.platform);
    const Prediction crowded = predictStep(w, c, comm, p);
    EXPECT_GT(crowded.dpCommSeconds, 0.0);
    EXPECT_NEAR(crowded.stepSeconds, crowded.computeSeconds + crowded.dpCommSeconds, 1e-12);
    EXPECT_NEAR(crowded.dpExposedSeconds, crowded.dpCommSeconds, 1e-12);
}

// A crowded host's pipeline pays the measured cost of each hand-off while it fills
// and drains (2 x (pp - 1) of them), in its bubble (4 stages of one rank: the chain
// of stages, not the host's cores, sets the step); data-parallel replicas meet at
// the gradients' wait after running apart the whole pipeline, at the measured part
// per second of compute (without overlap, so the wait and not the host's cores sets
// the step).
// Measured with the model's processes at its example's 8 samples and at one: a plan
// of micro-batches of m samples computes at the slowdown in proportion between them
// (one figure where not measured, or for micro-batches of 8 and more).
TEST(PlannerPredict, SmallMicroBatchesComputeAtTheirOwnSlowdown) {
    Cluster c = crowdedToyCluster();
    c.computeSlowdown = 1.8;
    EXPECT_EQ(c.forMicroBatch(1).computeSlowdown, 1.8);  // not measured: one figure
    c.oneSampleSlowdown = 1.1, c.slowdownSamples = 8;
    EXPECT_DOUBLE_EQ(c.forMicroBatch(1).computeSlowdown, 1.1);
    EXPECT_DOUBLE_EQ(c.forMicroBatch(2).computeSlowdown, 1.2);
    EXPECT_DOUBLE_EQ(c.forMicroBatch(8).computeSlowdown, 1.8);
    EXPECT_DOUBLE_EQ(c.forMicroBatch(64).computeSlowdown, 1.8);
    EXPECT_EQ(c.forMicroBatch(2).syncExtraPerCompute, c.syncExtraPerCompute);  // the rest as it was

    // A plan of 32 one-sample micro-batches (4 replicas of 32 samples) computes at
    // 1.1x what the same cluster would have it at 1.8x.
    const Workload w{toyModel(), 128, 0};
    CommEstimator comm(c.platform);
    Plan p;
    p.dp = 4, p.microBatches = 32;
    const Prediction one = predictStep(w, c, comm, p);
    c.oneSampleSlowdown = 0;
    const Prediction whole = predictStep(w, c, comm, p);
    EXPECT_NEAR(one.computeSeconds / whole.computeSeconds, 1.1 / 1.8, 1e-12);
    p.microBatches = 4;  // 8 samples each: the whole batch's slowdown
    const double eight = predictStep(w, c, comm, p).stepSeconds;
    c.oneSampleSlowdown = 1.1;
    EXPECT_EQ(predictStep(w, c, comm, p).stepSeconds, eight);
}

TEST(PlannerPredict, CrowdedPipelinesPayHandOffsAndReplicasTheirDrift) {
    const Workload w{toyModel(), 32, 0};
    Cluster c = crowdedToyCluster();
    CommEstimator comm(c.platform);
    Plan p;
    p.pp = 4;
    const Prediction plain = predictStep(w, c, comm, p);
    c.handoffSeconds = 1e-3;
    const Prediction handed = predictStep(w, c, comm, p);
    EXPECT_NEAR(handed.stepSeconds - plain.stepSeconds, 6e-3, 1e-12);
    EXPECT_NEAR(handed.bubbleSeconds - plain.bubbleSeconds, 6e-3, 1e-12);

    // When the ranks' busy time decides the step (one replica's TP groups as stages:
    // its exposed part is that floor's excess), the hand-offs come on top of it too.
    Plan short2;
    short2.tp = 2, short2.pp = 2, short2.microBatches = 4;
    c.handoffSeconds = 0;
    const Prediction floorPlain = predictStep(w, c, comm, short2);
    ASSERT_GT(floorPlain.dpExposedSeconds, 0.0) << "the pipeline, not the busy time, decided";
    c.handoffSeconds = 1e-3;
    EXPECT_NEAR(predictStep(w, c, comm, short2).stepSeconds - floorPlain.stepSeconds, 2e-3, 1e-12);

    p.pp = 1, p.dp = 4, p.overlap = false;
    p.bucketBytes = p.firstBucketBytes = 1 << 20;
    const Prediction together = predictStep(w, c, comm, p);
    c.handoffSeconds = 0;  // no pipeline, no hand-offs
    EXPECT_DOUBLE_EQ(predictStep(w, c, comm, p).stepSeconds, together.stepSeconds);
    c.syncExtraPerCompute = 0.1;
    const Prediction drifted = predictStep(w, c, comm, p);
    const double pipeline = together.computeSeconds + together.tpSeconds + together.p2pSeconds + together.bubbleSeconds;
    EXPECT_NEAR(drifted.stepSeconds - together.stepSeconds, 0.1 * pipeline, 1e-12);
    EXPECT_NEAR(drifted.dpExposedSeconds - together.dpExposedSeconds, 0.1 * pipeline, 1e-12);

    // One replica has no gradient wait to pay at; its TP allreduces do pay.
    p.dp = 1, p.tp = 4;
    c.syncExtraPerCompute = 0;
    const double still = predictStep(w, c, comm, p).stepSeconds;
    c.syncExtraPerCompute = 0.1;
    const Prediction tpOnly = predictStep(w, c, comm, p);
    EXPECT_GT(tpOnly.stepSeconds, still);
    EXPECT_NEAR(tpOnly.dpExposedSeconds, 0.0, 1e-15);
}

// A pipeline with fewer micro-batches than stages never runs every stage at once:
// its ranks meet the probed sync costs (every rank running) as far as the ranks
// running at once crowd the cores. Measured, 8 ranks on 2 cores: tp2 pp4 with one
// micro-batch (a stage of 2 ranks runs at a time) took 27.1 ms where its TP
// allreduces and hand-offs charged at the whole host's crowding predicted 35.8.
TEST(PlannerPredict, PipelinesShorterThanTheirStagesCrowdLess) {
    Cluster c = toyCluster(1, 8);
    ASSERT_TRUE(sim::setCores(&c.platform, 2));
    c.syncExtraSeconds = 1e-3, c.syncExtraPerCompute = 0.1;
    EXPECT_DOUBLE_EQ(c.withRunningAtOnce(8).syncFixed(), 1e-3);
    EXPECT_DOUBLE_EQ(c.withRunningAtOnce(64).syncFixed(), 1e-3);
    EXPECT_DOUBLE_EQ(c.withRunningAtOnce(4).syncFixed(), 1e-3 / 3);  // 2 a core of the probed 4
    EXPECT_DOUBLE_EQ(c.withRunningAtOnce(4).syncExtra(0.01), (1e-3 + 0.1 * 0.01) / 3);
    EXPECT_EQ(c.withRunningAtOnce(2).syncExtra(0.01), 0.0);  // a core each
    EXPECT_DOUBLE_EQ(toyCluster(1, 8).withRunningAtOnce(2).syncCrowding, 1.0);  // not crowded at all

    const Workload w{toyModel(), 32, 0};
    CommEstimator comm(c.platform);
    Cluster quiet = c;
    quiet.syncExtraSeconds = quiet.syncExtraPerCompute = 0;
    Plan p;
    p.tp = 2, p.pp = 4, p.microBatches = 1;
    // One stage of 2 ranks at a time on 2 cores: nothing of the crowding to pay.
    EXPECT_DOUBLE_EQ(predictStep(w, c, comm, p).stepSeconds, predictStep(w, quiet, comm, p).stepSeconds);
    // Two micro-batches run two stages at once (4 ranks, 2 a core: a third of the
    // crowding); four run every stage (all of it).
    p.microBatches = 2;
    const double two = predictStep(w, c, comm, p).tpSeconds - predictStep(w, quiet, comm, p).tpSeconds;
    p.microBatches = 4;
    const double four = predictStep(w, c, comm, p).tpSeconds - predictStep(w, quiet, comm, p).tpSeconds;
    EXPECT_GT(two, 0.0);
    EXPECT_GT(four, two);
}

// Hosts emulated on one machine share its cores: a pipeline with a stage a host
// runs faster than each host held to its part of the cores (a stage waiting to be
// handed its input leaves its cores to the others), bounded below by all its
// compute over all the cores; plans that keep every host equally busy are unchanged.
TEST(PlannerPredict, PooledCoresLendAWaitingHostsCores) {
    const Workload w{toyModel(), 64, 0};
    Cluster c = toyCluster(4, 2);
    ASSERT_TRUE(sim::setCores(&c.platform, 0.5));
    CommEstimator comm(c.platform);
    Plan p;
    p.dp = 2, p.pp = 4, p.microBatches = 8;  // a stage to a host
    p.bucketBytes = p.firstBucketBytes = 1 << 20;
    const Prediction apart = predictStep(w, c, comm, p);
    c.coresPooled = true;
    const Prediction pooled = predictStep(w, c, comm, p);
    EXPECT_LT(pooled.stepSeconds, apart.stepSeconds);
    // Every stage's compute, each micro-batch, both replicas, over the 2 cores.
    const double allCompute = pooled.computeSeconds * c.coreShare() * p.pp * p.dp;
    EXPECT_GE(pooled.stepSeconds, allCompute / 2 * (1 - 1e-9));
    const Cluster::CoreGroups g = c.coreGroups();
    EXPECT_EQ(g.groups, 1u);
    EXPECT_EQ(g.ranks, 8u);
    EXPECT_DOUBLE_EQ(g.cores, 2.0);

    Plan even;  // every host alike: nothing to lend
    even.dp = 8;
    even.bucketBytes = even.firstBucketBytes = 1 << 20;
    const double evenPooled = predictStep(w, c, comm, even).stepSeconds;
    c.coresPooled = false;
    EXPECT_DOUBLE_EQ(predictStep(w, c, comm, even).stepSeconds, evenPooled);
}

// Every plan of the search: the parts add up to the step, overlap is never slower
// than none, and a 16-bit cast halves the gradient bytes an allreduce moves.
TEST(PlannerPredict, PartsAddUpAndChoicesBehave) {
    const Workload w{toyModel(), 64, 0};
    Cluster c = toyCluster();
    c.elementwise = ComputeRate(20e9);  // the optimizer and the bucketer's passes cost time too
    CommEstimator comm(c.platform);
    SearchSpace space;
    space.bucketBytes = {uint64_t(1) << 20, uint64_t(4) << 20};
    space.compressionMinGain = 0;  // ranked by predicted time alone
    const SearchResult r = searchPlans(w, c, comm, space);
    ASSERT_GT(r.plans.size(), 20u);
    for (const RankedPlan& rp : r.plans) {
        const Prediction& q = rp.prediction;
        const double parts =
            q.computeSeconds + q.tpSeconds + q.p2pSeconds + q.bubbleSeconds + q.dpExposedSeconds + q.optimizerSeconds;
        EXPECT_NEAR(parts, q.stepSeconds, 1e-12 + 1e-9 * q.stepSeconds) << planLabel(rp.plan);
        EXPECT_GE(q.bubbleSeconds, 0.0);
        EXPECT_GE(q.dpExposedSeconds, 0.0);
        EXPECT_EQ(q.stageStarts.size(), rp.plan.pp);
        if (rp.plan.pp == 1) {
            EXPECT_EQ(q.bubbleSeconds + q.p2pSeconds, 0.0) << planLabel(rp.plan);
        }
        if (rp.plan.tp == 1) {
            EXPECT_EQ(q.tpSeconds, 0.0) << planLabel(rp.plan);
        }
        if (rp.plan.dp > 1) {
            EXPECT_GT(q.dpCommSeconds, 0.0) << planLabel(rp.plan);
        }
        if (!rp.plan.overlap) {
            Plan on = rp.plan;
            on.overlap = true;
            EXPECT_LE(predictStep(w, c, comm, on).stepSeconds, q.stepSeconds) << planLabel(rp.plan);
        }
    }
    for (size_t i = 1; i < r.plans.size(); ++i)
        EXPECT_LE(r.plans[i - 1].prediction.stepSeconds, r.plans[i].prediction.stepSeconds);
    Plan none;
    none.dp = 8;
    Plan half = none;
    half.compression = "fp16";
    const uint64_t gradBytes = w.model.parameterCount() * 4;  // one bucket per group: all fit in 25 MiB... except the first
    const uint64_t wireNone = predictStep(w, c, comm, none).wireBytes, wireHalf = predictStep(w, c, comm, half).wireBytes;
    EXPECT_GT(wireNone, gradBytes);  // 2(n-1)/n of every bucket
    EXPECT_NEAR(double(wireHalf), wireNone / 2.0, 8.0);  // rounding per bucket
}

TEST(PlannerSearch, MemoryLimitAndEquivalentChoices) {
    Workload w{toyModel(), 64, 0};
    const Cluster c = toyCluster();
    CommEstimator comm(c.platform);
    SearchSpace space;
    space.compressions = {"none"};
    const SearchResult all = searchPlans(w, c, comm, space);
    // Gradients of at most 6.4 MB: 25 MiB and 100 MiB buckets pack them alike, and
    // the plan with the smaller size stands for both.
    for (const RankedPlan& rp : all.plans) EXPECT_NE(rp.plan.bucketBytes, uint64_t(100) << 20) << planLabel(rp.plan);
    EXPECT_GT(all.equivalent, 0u);
    // A limit between the leanest plan and the rest keeps exactly those under it.
    uint64_t leanest = all.leanest.prediction.memoryBytes;
    w.memoryLimit = leanest;
    const SearchResult tight = searchPlans(w, c, comm, space);
    ASSERT_FALSE(tight.plans.empty());
    for (const RankedPlan& rp : tight.plans) EXPECT_LE(rp.prediction.memoryBytes, leanest);
    EXPECT_EQ(tight.plans.size() + tight.overMemory + tight.equivalent, tight.considered);
    w.memoryLimit = leanest - 1;
    const SearchResult none = searchPlans(w, c, comm, space);
    EXPECT_TRUE(none.plans.empty());
    EXPECT_EQ(none.leanest.prediction.memoryBytes, leanest);
}

// Compressors round or drop gradients: a compressed plan ranks above an exact one only
// when the exact one is predicted more than compressionMinGain slower.
TEST(PlannerSearch, CompressedPlansMustShowTheirGain) {
    const Workload w{toyModel(), 64, 0};
    const Cluster c = toyCluster();
    CommEstimator comm(c.platform);
    SearchSpace space;
    space.compressions = {"none", "fp16"};
    auto firstOf = [](const SearchResult& r, bool exact) {  // the first-ranked exact or compressed plan
        for (const RankedPlan& rp : r.plans)
            if ((rp.plan.compression == "none") == exact) return rp;
        ADD_FAILURE() << "no " << (exact ? "exact" : "compressed") << " plan";
        return RankedPlan{};
    };
    space.compressionMinGain = 0;
    const SearchResult byTime = searchPlans(w, c, comm, space);
    const RankedPlan exact = firstOf(byTime, true), packed = firstOf(byTime, false);
    ASSERT_LT(packed.prediction.stepSeconds, exact.prediction.stepSeconds);  // fp16 saves the toy's TCP time
    EXPECT_EQ(planLabel(byTime.plans.front().plan), planLabel(packed.plan));
    const double gain = exact.prediction.stepSeconds / packed.prediction.stepSeconds - 1;
    space.compressionMinGain = 0.9 * gain;
    EXPECT_EQ(planLabel(searchPlans(w, c, comm, space).plans.front().plan), planLabel(packed.plan));
    space.compressionMinGain = 1.1 * gain;
    const SearchResult cautious = searchPlans(w, c, comm, space);
    EXPECT_EQ(planLabel(cautious.plans.front().plan), planLabel(exact.plan));
    EXPECT_EQ(cautious.plans.size(), byTime.plans.size());  // the same plans, ranked otherwise
    // Within each kind the order is by predicted time still.
    for (bool kind : {true, false}) {
        double last = 0;
        for (const RankedPlan& rp : cautious.plans)
            if ((rp.plan.compression == "none") == kind) {
                EXPECT_LE(last, rp.prediction.stepSeconds) << planLabel(rp.plan);
                last = rp.prediction.stepSeconds;
            }
    }
    std::string why;
    for (double bad : {-0.01, 1.5, std::nan("")}) {
        space.compressionMinGain = bad;
        EXPECT_FALSE(checkSearchSpace(space, &why)) << bad;
        EXPECT_NE(why.find("gain"), std::string::npos) << why;
    }
}

TEST(PlannerPlanFile, RoundTripsThePlans) {
    const Workload w{toyModel(), 64, 0};
    const Cluster c = toyCluster();
    CommEstimator comm(c.platform);
    SearchSpace space;
    space.compressions = {"none", "topk:0.05"};
    const SearchResult r = searchPlans(w, c, comm, space);
    const PlanReport report{&w, &c, &r};
    const std::string path = ::testing::TempDir() + "/planner_test_plan.json";
    {
        std::FILE* f = std::fopen(path.c_str(), "w");
        const std::string text = planFileJson(report);
        ASSERT_EQ(std::fwrite(text.data(), 1, text.size(), f), text.size());
        std::fclose(f);
    }
    for (size_t i : {size_t(0), r.plans.size() - 1}) {
        Plan p;
        std::string why;
        double predictedMs = -1;
        ASSERT_TRUE(readPlanFile(path, i, &p, &why, &predictedMs)) << why;
        EXPECT_EQ(planLabel(p), planLabel(r.plans[i].plan));
        EXPECT_DOUBLE_EQ(predictedMs, r.plans[i].prediction.stepSeconds * 1e3);
    }
    Plan p;
    std::string why;
    EXPECT_FALSE(readPlanFile(path, r.plans.size(), &p, &why));
    EXPECT_NE(why.find("no plan " + std::to_string(r.plans.size() + 1)), std::string::npos) << why;
    EXPECT_NE(rankedTable(report, 3).find("dp"), std::string::npos);
    std::remove(path.c_str());
}

// A plan's predicted step is read for a run to report against: optional (0 without
// it), refused with its field named when it is there but not a number of at least 0.
TEST(PlannerPlanFile, PredictedStepIsOptionalButChecked) {
    const std::string path = ::testing::TempDir() + "/planner_test_predicted.json";
    auto read = [&](const std::string& predicted, double* ms, std::string* why) {
        std::ofstream(path) << R"({"plans": [{"dp": 2, "tp": 1, "pp": 1, "micro_batches": 1, "bucket_bytes": 1024,
            "first_bucket_bytes": 1024, "compression": "none", "overlap": true, "stage_starts": [0])" +
                                   predicted + "}]}";
        Plan p;
        return readPlanFile(path, 0, &p, why, ms);
    };
    double ms = -1;
    std::string why;
    ASSERT_TRUE(read(R"(, "predicted": {"step_ms": 12.5})", &ms, &why)) << why;
    EXPECT_EQ(ms, 12.5);
    ASSERT_TRUE(read("", &ms, &why)) << why;
    EXPECT_EQ(ms, 0.0);
    ms = 7;
    EXPECT_FALSE(read(R"(, "predicted": {"step_ms": "fast"})", &ms, &why));
    EXPECT_EQ(why, path + ": plans[0].predicted.step_ms: missing or not a number of at least 0");
    EXPECT_EQ(ms, 7.0);  // nothing changed
    EXPECT_FALSE(read(R"(, "predicted": 3)", &ms, &why));
    std::remove(path.c_str());
}

// The compressors' own work, timed on the bucketer's code: every rate measured and
// plausible for one core (above 0, below a microsecond an entry), and a plan that
// compresses with sign pays encode + n x decode for its gradient's entries instead
// of the estimate from the reduce rate.
TEST(PlannerCodecs, MeasuredAndCharged) {
    const CodecRates r = measureCodecs();
    ASSERT_TRUE(r.measured);
    for (double v : {r.signEncode, r.signDecodePerRank, r.topkEncode, r.topkDecodePass + r.topkDecodePair}) {
        EXPECT_GT(v, 0.0);
        EXPECT_LT(v, 1e-6);
    }
    const Workload w{toyModel(), 64, 0};
    Cluster c = toyCluster(1, 8);
    CommEstimator comm(c.platform);
    Plan p;
    p.dp = 8;
    p.compression = "sign";
    p.overlap = false;
    const double before = predictStep(w, c, comm, p).dpCommSeconds;
    c.codecs = r;
    const double after = predictStep(w, c, comm, p).dpCommSeconds;
    const double entries = double(w.model.parameterCount());
    // Before: no passes (element-wise work free here), decoding at the reduce rate.
    const double estimated = 8 * 4 * entries * c.platform.gamma;
    EXPECT_NEAR(after - before, (r.signEncode + 8 * r.signDecodePerRank) * entries - estimated, 1e-9 + 1e-6 * after);
}

// With the model's measured hook cost a compressed plan pays that (half at launch,
// half at finish, on the rank's core share) and the plain path's scaling pass in
// place of the codec rates, plus the other ranks' payloads decoded at them.
TEST(PlannerCodecs, MeasuredHookReplacesTheRates) {
    Workload w{toyModel(), 64, 0};
    Cluster c = crowdedToyCluster();  // 4 ranks, 2 cores: the hook's work at half a core
    c.codecs = measureCodecs();
    c.elementwise = ComputeRate(20e9);  // the scaling pass costs time
    CommEstimator comm(c.platform);
    Plan p;
    p.dp = 4;
    p.compression = "sign";
    p.overlap = false;
    p.bucketBytes = p.firstBucketBytes = uint64_t(64) << 20;  // one bucket: one scaling pass to charge
    const Prediction rates = predictStep(w, c, comm, p);
    const double entries = double(w.model.parameterCount()), bytes = 4 * entries;
    w.model.compressionOverheadSeconds["sign"] = 0.004;
    const Prediction hooked = predictStep(w, c, comm, p);
    const double codec = c.computeSeconds((c.codecs.signEncode + 4 * c.codecs.signDecodePerRank) * entries);
    const double instead = c.computeSeconds(0.004 + 3 * c.codecs.signDecodePerRank * entries) +
                           c.coldElementwiseSeconds(2 * bytes);
    EXPECT_NEAR(hooked.dpCommSeconds - rates.dpCommSeconds, instead - codec, 1e-12 + 1e-9 * hooked.dpCommSeconds);
    EXPECT_EQ(hooked.wireBytes, rates.wireBytes);
    // Another compressor's plan is unchanged by the sign hook's figure.
    p.compression = "fp16";
    w.model.compressionOverheadSeconds.erase("sign");
    const double fp16 = predictStep(w, c, comm, p).stepSeconds;
    w.model.compressionOverheadSeconds["sign"] = 0.004;
    EXPECT_EQ(predictStep(w, c, comm, p).stepSeconds, fp16);
}

// Measured by the model's own processes on hosts like the cluster's, every rank
// training, the hook's cost is wall time there: charged as it is, in place of the
// one-core figure, with nothing added for decoding the others' payloads (in it).
// Not on hosts the model's sharing was not measured for.
TEST(PlannerCodecs, HookMeasuredOnTheHostIsChargedAsItIs) {
    Workload w{toyModel(), 64, 0};
    Cluster c = crowdedToyCluster();
    c.codecs = measureCodecs();
    c.elementwise = ComputeRate(20e9);
    CommEstimator comm(c.platform);
    Plan p;
    p.dp = 4;
    p.compression = "sign";
    p.overlap = false;
    p.bucketBytes = p.firstBucketBytes = uint64_t(64) << 20;
    w.model.compressionOverheadSeconds["sign"] = 0.004;
    const Prediction oneCore = predictStep(w, c, comm, p);
    w.model.hostSharing.compressionOverheadSeconds["sign"] = 0.010;
    EXPECT_EQ(predictStep(w, c, comm, p).stepSeconds, oneCore.stepSeconds);  // not this cluster's sharing
    c.sharingFromModel = true;
    const Prediction here = predictStep(w, c, comm, p);
    const double entries = double(w.model.parameterCount());
    const double oneCoreHook = c.computeSeconds(0.004 + 3 * c.codecs.signDecodePerRank * entries);
    EXPECT_NEAR(here.dpCommSeconds - oneCore.dpCommSeconds, 0.010 - oneCoreHook, 1e-12 + 1e-9 * here.dpCommSeconds);
    EXPECT_EQ(here.wireBytes, oneCore.wireBytes);
    // A compressor it did not time keeps the one-core figure.
    w.model.hostSharing.compressionOverheadSeconds = {{"fp16", 0.010}};
    EXPECT_EQ(predictStep(w, c, comm, p).stepSeconds, oneCore.stepSeconds);
}

// A framework's own bucket copies (in, scaled by 1/n, and back) measured in the
// model's step overhead (DDP over one rank) are not charged again by the bucket model;
// the collective and a hook's own work still are.
TEST(PlannerSync, BucketCopiesMeasuredInTheStepAreNotChargedAgain) {
    const Cluster c = toyCluster(1, 2);
    CommEstimator comm(c.platform);
    const GroupLayout dp = dataLayout(c.platform, 2, 1, 1);
    const uint64_t bytes = 4u << 20;
    SyncOptions o;
    o.bucketBytes = o.firstBucketBytes = bytes;
    o.overlap = false;
    o.backwardSeconds = 0.020;
    o.passSeconds = [](double b) { return b * 1e-9; };  // a pass reading and writing b bytes
    o.onRank = [](double idle) { return idle; };
    const double copy = 2.0 * double(bytes) * 1e-9;      // one pass over the bucket, read and written
    const double allReduce = comm.seconds(dp, CollType::AllReduce, bytes);
    const SyncResult charged = simulateGradientSync(comm, dp, {{bytes, 0.010, 0}}, o);
    EXPECT_NEAR(charged.commSeconds, allReduce + 3 * copy, 1e-12);  // in, scaled, back
    o.bucketCopiesMeasured = true;
    const SyncResult measured = simulateGradientSync(comm, dp, {{bytes, 0.010, 0}}, o);
    EXPECT_NEAR(measured.commSeconds, allReduce, 1e-12);
    EXPECT_NEAR(measured.exposedSeconds, allReduce, 1e-12);
    EXPECT_EQ(measured.wireBytes, charged.wireBytes);
    // A measured hook: its own work stays, the copies go.
    o.compression.kind = Compression::Fp16;
    o.hookSecondsPerByte = 1e-9;
    o.hookMeasuredHere = true;
    const double half = comm.seconds(dp, CollType::AllReduce, bytes / 2);
    EXPECT_NEAR(simulateGradientSync(comm, dp, {{bytes, 0.010, 0}}, o).commSeconds, half + double(bytes) * 1e-9, 1e-12);
    o.bucketCopiesMeasured = false;
    EXPECT_NEAR(simulateGradientSync(comm, dp, {{bytes, 0.010, 0}}, o).commSeconds,
                half + double(bytes) * 1e-9 + 3 * copy, 1e-12);
}

// The model file says whether its step overhead holds a framework's data parallelism.
TEST(PlannerModel, DataParallelInStepOverhead) {
    const std::string layer = R"("layers": [{"params": 1, "forward_flops": 2, "activation_bytes": 4}])";
    ModelSpec m;
    std::string why;
    ASSERT_TRUE(parseModel(R"({"step_overhead_seconds": 0.001, "data_parallel_in_step_overhead": true, )" + layer + "}", &m, &why))
        << why;
    EXPECT_TRUE(m.dataParallelInStepOverhead);
    ModelSpec again;
    ASSERT_TRUE(parseModel(modelJson(m), &again, &why)) << why;
    EXPECT_TRUE(again.dataParallelInStepOverhead);
    EXPECT_FALSE(toyModel().dataParallelInStepOverhead);
    EXPECT_EQ(modelJson(toyModel()).find("data_parallel_in_step_overhead"), std::string::npos);
    EXPECT_EQ(parseError(R"({"data_parallel_in_step_overhead": "yes", )" + layer + "}"),
              "data_parallel_in_step_overhead: must be true or false");
    // Predicted: the bucket copies drop out of the averaging, but only where a step
    // overhead was measured (without one the flag has nothing to stand on).
    Workload w{toyModel(), 64, 0};
    Cluster c = toyCluster(1, 4);
    c.elementwise = ComputeRate(20e9);
    CommEstimator comm(c.platform);
    Plan p;
    p.dp = 4;
    w.model.stepOverheadSeconds = 0.001;
    const double charged = predictStep(w, c, comm, p).dpCommSeconds;
    w.model.dataParallelInStepOverhead = true;
    const double copies = 3 * c.coldElementwiseSeconds(2.0 * double(w.model.parameterCount() * 4));
    EXPECT_NEAR(charged - predictStep(w, c, comm, p).dpCommSeconds, copies, 1e-12);
    w.model.stepOverheadSeconds = 0;
    EXPECT_EQ(predictStep(w, c, comm, p).dpCommSeconds, charged);
}

TEST(PlannerSync, EncodingDelaysTheBackwardAndDecodingFollowsEachWait) {
    // Two 4 MB buckets of 1-bit compression over 2 ranks, ready at 10 and 20 ms:
    // encoding (1 ms each) runs on the training thread when a bucket is launched,
    // the all-gathers on the stream, decoding (1 ms each) after the step's wait.
    const Cluster c = toyCluster(1, 2);
    CommEstimator comm(c.platform);
    const GroupLayout dp = dataLayout(c.platform, 2, 1, 1);
    const uint64_t bytes = 4u << 20, entries = bytes / 4;
    SyncOptions o;
    o.bucketBytes = o.firstBucketBytes = bytes;
    o.compression.kind = Compression::Sign;
    o.backwardSeconds = 0.020;
    o.codecs.measured = true;
    o.codecs.signEncode = 1e-3 / double(entries);
    o.codecs.signDecodePerRank = 0.5e-3 / double(entries);
    o.onRank = [](double idle) { return idle; };
    const SyncResult r = simulateGradientSync(comm, dp, {{bytes, 0.010, 0}, {bytes, 0.020, 0}}, o);
    ASSERT_EQ(r.buckets, 2u);
    const double gather = comm.seconds(dp, CollType::AllGather, 2 * (4 + entries / 8));
    const double first = 0.011 + gather;                          // launched at 10 ms, encoded by 11
    const double second = std::max(first, 0.022) + gather;        // ready at 21 (the backward paid 1 ms), encoded by 22
    const double end = std::max(std::max(0.022, first) + 0.001, second) + 0.001;
    EXPECT_NEAR(r.exposedSeconds, end - 0.020, 1e-12);
    EXPECT_NEAR(r.commSeconds, 2 * (0.002 + gather), 1e-12);
    // Without overlap both are launched when the backward ends, one after the other.
    o.overlap = false;
    const SyncResult late = simulateGradientSync(comm, dp, {{bytes, 0.010, 0}, {bytes, 0.020, 0}}, o);
    const double a = 0.021 + gather, b = std::max(a, 0.022) + gather;
    EXPECT_NEAR(late.exposedSeconds, std::max(std::max(0.022, a) + 0.001, b) + 0.001 - 0.020, 1e-12);
}
