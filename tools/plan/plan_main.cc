// hostccl-plan: chooses how to train a model on a cluster before training it.
// Reads the model (layers with parameters, FLOPs and activations), the batch and a
// memory limit, takes the cluster from a platform file, a saved description, a
// rank table, the command line or a probe under a launcher, measures this host's
// GEMM rate, predicts every dp x tp x pp / micro-batch / bucket / compression /
// overlap plan (planner/), and prints them ranked; --out writes the plan file.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <tuple>
#include <sstream>

#include "core/bootstrap/rank_table.h"
#include "hostccl/hostccl.h"
#include "planner/crowding_probe.h"
#include "planner/plan_file.h"
#include "planner/plan_report.h"
#include "planner/scale_out.h"
#include "tools/sim/cli_options.h"
#include "sim/platform_options.h"

using namespace hostccl;
using namespace hostccl::plan;

namespace {

struct Options : sim::PlatformOptions {
    std::string modelPath, rankTablePath, outPath, htmlPath;
    uint64_t globalBatch = 0;
    std::string memoryText, bucketsText = "1M,4M,25M,100M", compressionText = "none,fp16,bf16,topk:0.01,sign";
    std::string overlapText = "both", tpText, ppText, scaleText;
    uint32_t maxMicroBatches = 64;
    double compressionMinGainPct = 5;
    double gflops = 0;  // 0: measure
    double elementwiseGBps = 0;  // 0: measure
    double syncUs = -1;          // below 0: measured by --probe on a crowded host, else 0
    double syncPerCompute = -1;  // the same
    double handoffUs = -1;       // the same
    double syncRampUs = -1;      // the same
    double syncFloorUs = -1;     // the same
    double slowdown = 0;         // 0: measured by --probe, else 1
    bool pooledCores = false;    // the hosts share one machine's cores
    size_t top = 10;
};

// The rank table's servers set the hosts and ranks per host the command line left open.
bool applyRankTable(Options& o, std::string* why) {
    if (o.rankTablePath.empty()) return true;
    RankTable table;
    std::string content;
    if (loadRankTable(o.rankTablePath, &table, &content, why) != HCCL_SUCCESS) return false;
    std::map<uint32_t, uint32_t> perServer;
    for (const RankTableEntry& e : table.ranks) ++perServer[e.serverIndex];
    const uint32_t first = perServer.begin()->second;
    for (auto& [server, count] : perServer)
        if (count != first)
            return *why = fmt::format("--rank-table {}: servers hold {} and {} ranks; the planner needs the same on every host",
                                      o.rankTablePath, first, count),
                   false;
    if (o.hosts == 0) o.hosts = static_cast<uint32_t>(perServer.size());
    if (o.ranksPerHost == 0) o.ranksPerHost = first;
    return true;
}

bool buildSearchSpace(const Options& o, SearchSpace* s, std::string* why) {
    s->bucketBytes.clear();
    for (const std::string& b : sim::splitList(o.bucketsText)) {
        uint64_t bytes = 0;
        if (!sim::parseBytes(b, &bytes) || bytes == 0)
            return *why = fmt::format("--buckets: '{}' is not a size above 0 (e.g. 4M)", b), false;
        s->bucketBytes.push_back(bytes);
    }
    s->compressions = sim::splitList(o.compressionText);
    if (o.overlapText == "both") s->overlap = {true, false};
    else if (o.overlapText == "on") s->overlap = {true};
    else if (o.overlapText == "off") s->overlap = {false};
    else return *why = fmt::format("--overlap: '{}' is not both, on or off", o.overlapText), false;
    s->maxMicroBatches = o.maxMicroBatches;
    if (!(o.compressionMinGainPct >= 0 && o.compressionMinGainPct <= 100))
        return *why = fmt::format("--compression-min-gain: {} is not a percentage from 0 to 100", o.compressionMinGainPct), false;
    s->compressionMinGain = o.compressionMinGainPct / 100;
    for (auto [text, into, flag] : {std::tuple{&o.tpText, &s->tp, "--tp"}, std::tuple{&o.ppText, &s->pp, "--pp"}})
        for (const std::string& d : sim::splitList(*text)) {
            uint64_t v = 0;
            if (!sim::parseBytes(d, &v) || v == 0 || v > (1u << 24))
                return *why = fmt::format("{}: '{}' is not a degree from 1", flag, d), false;
            into->push_back(static_cast<uint32_t>(v));
        }
    if (!checkSearchSpace(*s, why)) return *why = "--compression / --buckets: " + *why, false;
    return true;
}

bool buildWorkload(const Options& o, Workload* w, std::string* why) {
    if (!loadModel(o.modelPath, &w->model, why)) return *why = "--model " + *why, false;
    if (o.globalBatch == 0) return *why = "--global-batch must be at least 1", false;
    w->globalBatch = o.globalBatch;
    if (!o.memoryText.empty() && (!sim::parseBytes(o.memoryText, &w->memoryLimit) || w->memoryLimit == 0))
        return *why = fmt::format("--memory-limit: '{}' is not a size above 0 (e.g. 2G)", o.memoryText), false;
    return true;
}

std::string readableBytes(uint64_t b) {
    if (b < (1 << 20)) return fmt::format("{:.1f} KiB", b / 1024.0);
    if (b < (1ull << 30)) return fmt::format("{:.1f} MiB", b / 1048576.0);
    return fmt::format("{:.2f} GiB", b / 1073741824.0);
}

// Written whole or not at all: a temporary file renamed over the target.
bool writeWhole(const std::string& path, const std::string& text) {
    const std::string tmp = path + ".tmp";
    {
        std::ofstream f(tmp);
        f << text;
        if (!f) return std::filesystem::remove(tmp), false;
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    return !ec;
}

// The model file's host sharing (measured with the model's own processes) where it
// was measured for hosts like this cluster's: as many ranks on as many cores. Hosts
// that pool one machine's cores (emulated hosts) share them as one host of all
// their ranks does, which is how the model's processes measure it there.
bool modelSharingFits(const ModelSpec::MeasuredSharing& m, const sim::Platform& p, bool pooled) {
    const uint32_t sharers = pooled ? p.ranks() : p.ranksPerHost;
    const double cores = p.cores() * p.coreSpeed * (pooled ? p.hosts : 1);
    return m.ranksPerHost == sharers && sharers > 1 && std::abs(m.cores - cores) <= 1e-6 * cores;
}

// The probe's raw figures as the cluster charges them.
void applySharing(const HostSharing& h, Cluster* c) {
    const sim::Platform& p = c->platform;
    c->computeSlowdown = h.computeSlowdown;
    CommEstimator comm(p, /*dataInCache=*/true);  // the probe's 64 KiB stay in cache
    const GroupLayout host{1, p.ranksPerHost, 1};
    const double op = comm.seconds(host, CollType::AllReduce, kSyncProbeBytes);
    c->syncExtraSeconds = std::max(0.0, h.syncBase - op);
    // Per second of the plan's compute, which counts a rank's share of a core.
    c->syncExtraPerCompute = h.syncPerCompute * c->coreShare() / c->computeSlowdown;
    // Below the short interval's compute the fixed part is not measured: from none
    // (ranks that barely computed meet in step) up to it, in the plan's compute seconds.
    c->syncRampSeconds = h.syncShortCompute * c->computeSlowdown / c->coreShare();
    c->syncFloorSeconds = std::max(0.0, h.syncFloor - op);
    c->handoffSeconds = h.handoff;
}

// How ranks sharing a host slow each other's compute and what a sync between
// compute phases costs beyond its op: measured with the probe's thread ranks, or
// under a launcher with the job's processes (every rank takes part; rank 0, the
// `printer`, keeps the figures), or from the model file (its own processes: they
// replace the probe's but for the pipeline hand-off, which they do not measure), or given.
bool measureSharing(const Options& o, const ModelSpec& model, Cluster* c, bool printer, std::string* why) {
    uint32_t rank, size, local;
    const bool launched = HostcclGetLauncherRank(&rank, &size, &local) == HCCL_SUCCESS && o.probeRanks == 0;
    const sim::Platform& p = c->platform;
    const bool probeHosts = o.probe && p.ranksPerHost > 1 && (launched || p.hosts == 1);
    HostSharing h;
    if (probeHosts && !measureHostSharing(launched ? 0 : p.ranksPerHost, p.cores() * p.coreSpeed, &h, why)) return false;
    if (!printer) return true;
    c->sharingFromModel = modelSharingFits(model.hostSharing, p, o.pooledCores);
    if (c->sharingFromModel) {
        const double handoff = h.handoff;
        h = model.hostSharing.figures;
        h.handoff = handoff;
        c->oneSampleSlowdown = model.hostSharing.oneSampleSlowdown;
        c->slowdownSamples = model.hostSharing.samples;
    }
    if (probeHosts || c->sharingFromModel) applySharing(h, c);
    if (o.syncUs >= 0) c->syncExtraSeconds = o.syncUs * 1e-6;
    if (o.syncPerCompute >= 0) c->syncExtraPerCompute = o.syncPerCompute;
    if (o.handoffUs >= 0) c->handoffSeconds = o.handoffUs * 1e-6;
    if (o.syncRampUs >= 0) c->syncRampSeconds = o.syncRampUs * 1e-6;
    if (o.syncFloorUs >= 0) c->syncFloorSeconds = o.syncFloorUs * 1e-6;
    if (o.slowdown >= 1) c->computeSlowdown = o.slowdown, c->oneSampleSlowdown = 0;  // one figure, as given
    c->sharingKnown = probeHosts || c->sharingFromModel || o.slowdown >= 1;
    c->coresPooled = o.pooledCores;
    return true;
}

// --scale-ranks: the same hosts, more of them, the per-rank batch held.
int scaleAndReport(const Options& o, const Workload& w, const Cluster& c, const SearchSpace& space) {
    std::vector<uint32_t> counts;
    for (const std::string& t : sim::splitList(o.scaleText)) {
        uint64_t n = 0;
        if (!sim::parseBytes(t, &n) || n == 0 || n > (1u << 20) || n % c.platform.ranksPerHost != 0)
            return std::fprintf(stderr, "hostccl-plan: --scale-ranks: '%s' is not a rank count that is a multiple of %u ranks per host\n",
                                t.c_str(), c.platform.ranksPerHost),
                   2;
        counts.push_back(static_cast<uint32_t>(n));
    }
    if (w.globalBatch % c.ranks() != 0)
        return std::fprintf(stderr, "hostccl-plan: --scale-ranks: the global batch %llu does not divide over the cluster's %u ranks\n",
                            static_cast<unsigned long long>(w.globalBatch), c.ranks()),
               2;
    std::sort(counts.begin(), counts.end());
    const ScaleResult r = predictScaling(w.model, w.globalBatch / c.ranks(), w.memoryLimit, c, counts, space);
    std::printf("# model %s, %llu samples per rank and step; hosts of %u ranks: %s\n", w.model.name.c_str(),
                static_cast<unsigned long long>(w.globalBatch / c.ranks()), c.platform.ranksPerHost, c.platform.summary().c_str());
    std::fputs(scaleTable(r).c_str(), stdout);
    std::puts("# measured: compute rates on this machine; modelled: everything at scale (the simulator runs hostccl's "
              "algorithms on the described network)");
    return 0;
}

// The search may weigh compressed plans against exact ones (compression none, or no
// data parallelism), and the gain counts.
bool comparesCompression(const SearchSpace& s) {
    const auto compressed = [](const std::string& spec) { return spec != "none"; };
    return std::any_of(s.compressions.begin(), s.compressions.end(), compressed) && s.compressionMinGain > 0;
}

// "bf16 0.11 ms, fp16 0.52 ms": what each compressor's comm hook adds to a step.
std::string hookList(const std::map<std::string, double>& seconds) {
    std::string out;
    for (const auto& [spec, s] : seconds) out += fmt::format("{}{} {:.2f} ms", out.empty() ? "" : ", ", spec, s * 1e3);
    return out;
}

int searchAndReport(const Options& o, const Workload& w, const Cluster& c) {
    SearchSpace space;
    std::string why;
    if (!buildSearchSpace(o, &space, &why)) return std::fprintf(stderr, "hostccl-plan: %s\n", why.c_str()), 2;
    if (!o.scaleText.empty()) return scaleAndReport(o, w, c, space);
    CommEstimator comm(c.platform);
    const SearchResult result = searchPlans(w, c, comm, space);
    if (result.plans.empty()) {
        if (result.considered == 0) {
            std::fprintf(stderr,
                         "hostccl-plan: no dp x tp x pp split of %u ranks works: tp must divide the %u ranks per host, pp "
                         "be at most the model's %zu layers and dp divide the global batch of %llu\n",
                         c.ranks(), c.platform.ranksPerHost, w.model.layers.size(),
                         static_cast<unsigned long long>(w.globalBatch));
        } else {
            std::fprintf(stderr, "hostccl-plan: --memory-limit: no plan fits in %s per rank; the leanest (%s) needs %s\n",
                         readableBytes(w.memoryLimit).c_str(), planLabel(result.leanest.plan).c_str(),
                         readableBytes(result.leanest.prediction.memoryBytes).c_str());
        }
        return 2;
    }
    const PlanReport report{&w, &c, &result};
    if (!o.outPath.empty() && !writeWhole(o.outPath, planFileJson(report)))
        return std::fprintf(stderr, "hostccl-plan: cannot write %s\n", o.outPath.c_str()), 1;
    if (!o.htmlPath.empty() && !writeWhole(o.htmlPath, planReportHtml(report, std::max<size_t>(o.top, 1))))
        return std::fprintf(stderr, "hostccl-plan: cannot write %s\n", o.htmlPath.c_str()), 1;
    std::printf("# model %s: %llu parameters, %.3g forward FLOPs per sample, global batch %llu\n", w.model.name.c_str(),
                static_cast<unsigned long long>(w.model.parameterCount()), w.model.forwardFlopsPerSample(),
                static_cast<unsigned long long>(w.globalBatch));
    std::printf("# cluster: %s%s\n# compute: %s\n# compute: %s\n", c.platform.summary().c_str(),
                c.coresPooled ? "; the hosts' cores pooled (one machine)" : "", c.gemm.summary().c_str(),
                c.elementwise.summary("element-wise on one core", "GB/s", "MB").c_str());
    std::printf("# ranks sharing a host compute %.2fx slower than alone (beyond sharing cores)%s%s\n", c.computeSlowdown,
                c.oneSampleSlowdown > 0 ? fmt::format(" with micro-batches of {:g} samples, {:.2f}x with one",
                                                      c.slowdownSamples, c.oneSampleSlowdown).c_str() : "",
                c.sharingFromModel ? " (measured with the model's own processes: the model file's host_sharing)"
                : c.sharingKnown   ? ""
                                   : " (not measured)");
    if (c.codecs.measured)
        std::printf("# compressors on one core: sign %.2f ns an entry + %.2f per rank; top-k %.2f ns an entry + %.2f "
                    "per received pair\n",
                    c.codecs.signEncode * 1e9, c.codecs.signDecodePerRank * 1e9, (c.codecs.topkEncode + c.codecs.topkDecodePass) * 1e9,
                    c.codecs.topkDecodePair * 1e9);
    if (!w.model.compressionOverheadSeconds.empty())
        std::printf("# compressors as the model's comm hooks add to a step on one core (measured, used instead of "
                    "the rates): %s\n", hookList(w.model.compressionOverheadSeconds).c_str());
    if (c.sharingFromModel && !w.model.hostSharing.compressionOverheadSeconds.empty())
        std::printf("# ... and on these hosts, every rank training (measured with the model's own processes, used "
                    "instead): %s\n", hookList(w.model.hostSharing.compressionOverheadSeconds).c_str());
    if (c.crowded())
        std::printf("# crowded hosts (%u ranks on %.3g cores): each collective costs %.1f us more between compute phases%s "
                    "and %.2f %% of the compute since the last; a pipeline %.1f us per hand-off filling and draining\n",
                    c.platform.ranksPerHost, c.platform.cores() * c.platform.coreSpeed, c.syncExtraSeconds * 1e6,
                    c.syncRampSeconds > 0 ? fmt::format(" (in full from {:.0f} us of compute since the last, {:.1f} us "
                                                        "with none)", c.syncRampSeconds * 1e6,
                                                        std::min(c.syncFloorSeconds, c.syncExtraSeconds) * 1e6).c_str() : "",
                    c.syncExtraPerCompute * 100, c.handoffSeconds * 1e6);
    std::printf("# %llu plans predicted (%llu collective sizes simulated): %llu over the memory limit, %llu the same as "
                "a listed one but for a bucket size or overlap choice that changes nothing\n",
                static_cast<unsigned long long>(result.considered), static_cast<unsigned long long>(comm.simulatedOps()),
                static_cast<unsigned long long>(result.overMemory), static_cast<unsigned long long>(result.equivalent));
    if (comparesCompression(space))
        std::printf("# ranked by predicted step, but a compressed plan above an exact one only when the exact one is "
                    "predicted more than %g %% slower (--compression-min-gain)\n", space.compressionMinGain * 100);
    std::fputs(rankedTable(report, o.top).c_str(), stdout);
    if (!o.outPath.empty()) std::printf("# plan file: %s\n", o.outPath.c_str());
    if (!o.htmlPath.empty()) std::printf("# report: %s\n", o.htmlPath.c_str());
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    CLI::App app{"hostccl-plan: choose dp x tp x pp, micro-batches, buckets and compression for a model on a cluster"};
    app.add_option("--model", o.modelPath, "model description (JSON; see docs/planner.md)")->required();
    app.add_option("--global-batch", o.globalBatch, "samples per step over all replicas")->required();
    app.add_option("--memory-limit", o.memoryText, "bytes per rank, e.g. 2G (default: no limit)");
    sim::addPlatformOptions(app, &o,
                            "measure the cluster with a communicator (ranks as threads here, or one per process under "
                            "mpirun/srun; rank 0 plans)");
    app.add_option("--rank-table", o.rankTablePath, "take hosts and ranks per host from an HCCL rank table");
    app.add_option("--gflops", o.gflops, "one core's GEMM rate, GFLOP/s (default: measured with OpenBLAS)")
        ->check(CLI::PositiveNumber);
    app.add_option("--elementwise-GBps", o.elementwiseGBps,
                   "one core's rate through element-wise loops, GB/s read and written (default: measured)")
        ->check(CLI::PositiveNumber);
    app.add_option("--sync-us", o.syncUs,
                   "on a host with more ranks than cores, what a collective between compute phases costs beyond "
                   "the op, microseconds (default: measured by --probe: thread ranks, or the job's processes under a launcher)")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--sync-per-compute", o.syncPerCompute,
                   "on such a host, what a collective costs more per second of a rank's compute since its last one "
                   "(a fraction; default: measured by --probe: thread ranks, or the job's processes under a launcher)")
        ->check(CLI::Range(0.0, 10.0));
    app.add_option("--sync-ramp-us", o.syncRampUs,
                   "on such a host, the compute since a rank's last collective, microseconds, from which the fixed "
                   "part (--sync-us) is charged in full, growing in from none below it (default: --probe's short "
                   "interval, else 0: always in full)")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--sync-floor-us", o.syncFloorUs,
                   "on such a host, what a collective costs beyond the op with no compute since the rank's last one, "
                   "microseconds; the fixed part grows from it (default: measured by --probe, else 0)")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--handoff-us", o.handoffUs,
                   "on such a host, what a pipeline adds per hand-off between stages while it fills and drains, "
                   "microseconds (default: measured by --probe: thread ranks, or the job's processes under a launcher)")
        ->check(CLI::NonNegativeNumber);
    app.add_option("--compute-slowdown", o.slowdown,
                   "how much slower a rank computes with every rank of its host computing (default: measured with "
                   "--probe's thread ranks, else 1)")
        ->check(CLI::Range(1.0, 100.0));
    app.add_flag("--pooled-cores", o.pooledCores,
                 "the hosts run on one machine's cores (emulated hosts: network namespaces, containers): a rank "
                 "waiting on one host leaves its core to ranks of the others");
    app.add_option("--buckets", o.bucketsText, "gradient bucket sizes to try");
    app.add_option("--compression", o.compressionText, "compressors to try: none, fp16, bf16, topk[:ratio], sign");
    app.add_option("--overlap", o.overlapText, "both, on or off");
    app.add_option("--tp", o.tpText, "tensor-parallel degrees to consider, e.g. 1 (default: all that fit)");
    app.add_option("--pp", o.ppText, "pipeline degrees to consider, e.g. 1,2 (default: all that fit)");
    app.add_option("--compression-min-gain", o.compressionMinGainPct,
                   "rank a compressed plan above an exact one only when the exact one is predicted this many percent "
                   "slower (compressors round or drop gradients; 0: by predicted time alone)");
    app.add_option("--max-micro-batches", o.maxMicroBatches, "largest micro-batch count to try (powers of two)");
    app.add_option("--top", o.top, "plans to print");
    app.add_option("-o,--out", o.outPath, "write every fitting plan, ranked, as JSON");
    app.add_option("--scale-ranks", o.scaleText,
                   "instead: predict weak scaling to these rank counts (e.g. 64,256,1024,4096; multiples of the "
                   "ranks per host), the per-rank batch held at --global-batch / the cluster's ranks");
    app.add_option("--html", o.htmlPath, "write a report page (the top plans' predicted steps; opens offline)");
    CLI11_PARSE(app, argc, argv);

    std::string why;
    Workload w;
    Cluster c;
    bool printer = true;
    const bool ok = buildWorkload(o, &w, &why) && applyRankTable(o, &why) &&
                    (o.probe ? sim::probeFromOptions(o, &c.platform, &printer, &why) &&
                                   sim::applyOverrides(o, &c.platform, &why)
                             : sim::resolvePlatform(o, &c.platform, &why));
    if (!ok) return std::fprintf(stderr, "hostccl-plan: %s\n", why.c_str()), 2;
    if (!measureSharing(o, w.model, &c, printer, &why)) return std::fprintf(stderr, "hostccl-plan: %s\n", why.c_str()), 1;
    if (!printer) return 0;  // under a launcher, rank 0 plans
    c.gemm = o.gflops > 0 ? GemmTimer::flat(o.gflops * 1e9) : GemmTimer::measured();
    c.elementwise = o.elementwiseGBps > 0 ? ComputeRate(o.elementwiseGBps * 1e9) : measureElementwiseRate();
    if (o.elementwiseGBps <= 0) c.codecs = measureCodecs();  // flat rates given: a deterministic model
    return searchAndReport(o, w, c);
}
