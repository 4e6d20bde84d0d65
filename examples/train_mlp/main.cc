// Trains the MLP of model.h on a generated classification set, data-parallel (and
// optionally tensor-parallel), with gradient buckets that overlap backward and an
// optional gradient compressor. Prints per-step time split into compute and exposed
// communication, checks after every step that every rank holds identical parameters,
// and ends with a summary line.
//
//   train_mlp --ranks 4                                 # 4 local ranks (threads)
//   mpirun -n 4 train_mlp / torchrun ... train_mlp      # ranks from the launcher
//   train_mlp --ranks 4 --tp 2 --compression topk:0.01 --bucket-mb 4
#include <cblas.h>
#include <pthread.h>

#include <CLI/CLI.hpp>
#include <bit>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <thread>

#include "dataset.h"
#include "hostccl/bucketing.hpp"
#include "hostccl/parallel.hpp"
#include "model.h"
#include "planner/plan_reader.h"

namespace train_mlp {
namespace {

struct Flags {
    uint32_t ranks = 0;  // 0: from the launcher's environment
    uint32_t steps = 40, batch = 256, tp = 1, pp = 1, microBatches = 1;
    std::vector<uint32_t> stageStarts;  // the first layer of each stage (describeModel's numbering); empty: even
    ModelShape shape{32, 8, 64, 256, 2};
    float lr = 0, separation = 0.3f;  // lr 0: defaultLearningRate
    double bucketMiB = 25, firstBucketMiB = 1;
    std::string compression = "none";
    bool noOverlap = false, quiet = false;
    uint64_t seed = 1;
    std::string describePath;  // write the model for hostccl-plan and exit
    std::string planPath;      // take tp, micro-batches, buckets, compression, overlap from a plan file
    uint32_t planDp = 0;       // the plan's dp (checked against the world)
    double plannedStepMs = 0;  // the plan's predicted step (0: none), reported against the measured one
};

using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

// Word by word (FNV-1a's step on 8 bytes at a time, then a rotation so high bits
// reach low ones): byte by byte the check cost more than the step it follows.
uint64_t hashBytes(uint64_t h, const std::vector<float>& v) {
    const size_t words = v.size() / 2;
    for (size_t i = 0; i < words; ++i) {
        uint64_t w;
        std::memcpy(&w, &v[2 * i], sizeof(w));
        h = std::rotl((h ^ w) * 0x100000001B3ull, 29);
    }
    if (v.size() % 2 != 0) {
        uint32_t last;
        std::memcpy(&last, &v.back(), sizeof(last));
        h = std::rotl((h ^ last) * 0x100000001B3ull, 29);
    }
    return h;
}

// True when every data-parallel replica holds the same parameters: replicated
// parameters equal on all ranks of a pipeline stage, shards equal among those of
// the same stage and TP rank.
bool parametersAgree(hostccl::Communicator& world, Model& model, uint32_t tpRank, uint32_t stage) {
    uint64_t mine[4] = {0xCBF29CE484222325ull, 0xCBF29CE484222325ull, tpRank, stage};
    for (Parameter& p : model.parameters()) mine[p.sharded ? 1 : 0] = hashBytes(mine[p.sharded ? 1 : 0], p.value);
    std::vector<uint64_t> all(4 * world.size());
    world.allGather(mine, all.data(), 4, HCCL_DATA_TYPE_UINT64).wait();
    for (uint32_t r = 0; r < world.size(); ++r) {
        if (all[4 * r + 3] != stage) continue;
        if (all[4 * r] != mine[0]) return false;
        if (all[4 * r + 2] == tpRank && all[4 * r + 1] != mine[1]) return false;
    }
    return true;
}

// One step's micro-batches through this rank's pipeline stage (GPipe: every
// forward, then every backward in reverse order), activations from the previous
// stage and gradients to it, outputs to the next and gradients from it. Sends
// are waited for at the end: their buffers are the slots' own. Returns the sum
// of the micro-batches' losses (the last stage only).
double pipelineStep(hostccl::ParallelGroups& groups, Model& model, const std::vector<float>& x,
                    const std::vector<uint32_t>& labels, uint32_t micro, uint32_t count, uint32_t features,
                    uint32_t width, const std::function<void(size_t)>& gradReady) {
    std::vector<hostccl::Work> sends;
    std::vector<std::vector<float>> in(count), grad(count);
    double loss = 0;
    const size_t act = size_t(micro) * width;
    for (uint32_t m = 0; m < count; ++m) {
        std::span<const float> input = std::span<const float>(x).subspan(size_t(m) * micro * features, size_t(micro) * features);
        if (!groups.isFirstStage()) {
            in[m].resize(act);
            groups.recvFromPreviousStage(in[m].data(), act, HCCL_DATA_TYPE_FP32).wait();
            input = in[m];
        }
        loss += model.forward(m, input, std::span<const uint32_t>(labels).subspan(size_t(m) * micro, micro), micro,
                              MicroBatch{m, count});
        if (!groups.isLastStage()) sends.push_back(groups.sendToNextStage(model.output(m).data(), act, HCCL_DATA_TYPE_FP32));
    }
    for (uint32_t k = 0; k < count; ++k) {
        const uint32_t m = count - 1 - k;
        if (!groups.isLastStage()) {
            grad[m].resize(act);
            groups.recvFromNextStage(grad[m].data(), act, HCCL_DATA_TYPE_FP32).wait();
        }
        model.backward(m, grad[m], gradReady, MicroBatch{k, count});
        if (!groups.isFirstStage())
            sends.push_back(groups.sendToPreviousStage(model.inputGrad(m).data(), act, HCCL_DATA_TYPE_FP32));
    }
    hostccl::waitAll(sends);
    return loss;
}

struct Totals {
    double stepMs = 0, computeMs = 0, exposedMs = 0, commMs = 0, tpMs = 0, wireBytes = 0;
    uint32_t steps = 0;
    void add(double step, double compute, double exposed, const hostccl::GradientBucketer::StepStats& st, double tp) {
        stepMs += step;
        computeMs += compute;
        exposedMs += exposed;
        commMs += st.commMs;
        tpMs += tp;
        wireBytes += double(st.wireBytes);
        ++steps;
    }
};

// The rank counts the flags ask for, checked before any group is made.
void checkDegrees(const Flags& f, uint32_t n) {
    if (f.tp == 0 || n % f.tp != 0) throw hostccl::Error(HCCL_E_PARA, "--tp must divide the rank count");
    if (f.pp == 0 || n % (f.tp * f.pp) != 0) throw hostccl::Error(HCCL_E_PARA, "--tp x --pp must divide the rank count");
    if (f.pp > f.shape.blocks + 1)
        throw hostccl::Error(HCCL_E_PARA, "--pp " + std::to_string(f.pp) + " is more stages than " +
                                              std::to_string(f.shape.blocks) + " blocks and the head");
}

// This rank's place: its replica's batch, the micro-batch size and its stage's layers.
struct Place {
    uint32_t dp = 1, replica = 0, stage = 0, local = 0, micro = 0;
    StagePart part;
};

Place placeOf(const Flags& f, hostccl::ParallelGroups& groups, uint32_t n) {
    Place pl;
    pl.dp = groups.dataParallelSize(), pl.replica = groups.dataParallelRank(), pl.stage = groups.pipelineStage();
    if (f.planDp != 0 && f.planDp != pl.dp)
        throw hostccl::Error(HCCL_E_PARA, "--plan: the plan's dp " + std::to_string(f.planDp) + " x tp " + std::to_string(f.tp) +
                                              " x pp " + std::to_string(f.pp) + " is not the " + std::to_string(n) + " ranks");
    std::string why;
    const std::vector<uint32_t> starts = f.stageStarts.empty() ? evenStageStarts(f.shape, f.pp) : f.stageStarts;
    if (starts.size() != f.pp || !stagePart(f.shape, starts, pl.stage, &pl.part, &why))
        throw hostccl::Error(HCCL_E_PARA, "pipeline stages: " + (why.empty() ? "one start per stage expected" : why));
    if (f.batch % pl.dp != 0) throw hostccl::Error(HCCL_E_PARA, "--batch must be a multiple of the data-parallel degree");
    pl.local = f.batch / pl.dp;
    if (f.microBatches == 0 || pl.local % f.microBatches != 0)
        throw hostccl::Error(HCCL_E_PARA, "--micro-batches must divide the replica's batch of " + std::to_string(pl.local));
    pl.micro = pl.local / f.microBatches;
    return pl;
}

// Every parameter's gradient in the bucketer, in backward order; its bucket id by
// parameter. Shards and replicated parameters in separate buckets: a compressor's
// choices for a replicated tensor must not depend on shards, which differ between TP ranks.
std::vector<size_t> bucketParameters(Model& model, hostccl::GradientBucketer& buckets) {
    std::vector<size_t> bucketId(model.parameters().size());
    for (size_t id : model.backwardOrder()) {
        Parameter& p = model.parameters()[id];
        bucketId[id] = buckets.add(p.grad, p.sharded ? 1 : 0);
    }
    return bucketId;
}

void printHeader(const Flags& f, Model& model, hostccl::ParallelGroups& groups, uint32_t n, uint32_t dp, bool table) {
    size_t params = 0;
    for (auto& p : model.parameters()) params += p.value.size();
    std::printf("# train_mlp: %u ranks (dp %u x tp %u x pp %u, tp inside a host: %s), %zu parameters on rank 0, batch %u in %u micro-batches, "
                "compression %s, buckets %.3g MiB (first %.3g MiB), overlap %s\n",
                n, dp, f.tp, f.pp, groups.tensorParallelWithinHost() ? "yes" : "no", params, f.batch, f.microBatches,
                f.compression.c_str(), f.bucketMiB, f.firstBucketMiB, f.noOverlap ? "off" : "on");
    if (table) std::printf("# %5s %9s %9s %10s %12s %9s %9s %10s\n", "step", "loss", "step_ms", "compute_ms",
                           "exposed_ms", "comm_ms", "tp_ms", "wire_KiB");
}

// One step's forward and backward over its micro-batches (through the pipeline's
// stages when there are several); the replica's mean loss (the last stage's).
double computeStep(const Flags& f, hostccl::ParallelGroups& groups, Model& model, const Place& pl, const std::vector<float>& x,
                   const std::vector<uint32_t>& labels, const std::function<void(size_t)>& ready) {
    if (f.pp > 1)
        return pipelineStep(groups, model, x, labels, pl.micro, f.microBatches, f.shape.features, f.shape.width, ready) /
               f.microBatches;
    double loss = 0;
    const size_t rows = size_t(pl.micro) * f.shape.features;
    for (uint32_t m = 0; m < f.microBatches; ++m)
        loss += model.step(std::span<const float>(x).subspan(m * rows, rows),
                           std::span<const uint32_t>(labels).subspan(size_t(m) * pl.micro, pl.micro), pl.micro, ready,
                           MicroBatch{m, f.microBatches}) /
                f.microBatches;
    return loss;
}

void printSummary(const Flags& f, uint32_t n, uint32_t dp, double firstLoss, double loss, const Totals& t, size_t bucketCount) {
    const double k = t.steps ? t.steps : 1;
    std::printf("summary: ranks=%u dp=%u tp=%u pp=%u micro_batches=%u compression=%s overlap=%s steps=%u first_loss=%.5f final_loss=%.5f "
                "step_ms=%.2f compute_ms=%.2f exposed_comm_ms=%.2f comm_ms=%.2f tp_ms=%.2f wire_bytes_per_step=%.0f "
                "buckets=%zu params_identical=yes\n",
                n, dp, f.tp, f.pp, f.microBatches, f.compression.c_str(), f.noOverlap ? "off" : "on", f.steps, firstLoss, loss,
                t.stepMs / k, t.computeMs / k, t.exposedMs / k, t.commMs / k, t.tpMs / k, t.wireBytes / k, bucketCount);
    // With --plan: how far the planner's prediction is from this run (+: predicted slower).
    if (f.plannedStepMs > 0 && t.stepMs > 0)
        std::printf("plan: predicted_step_ms=%.2f measured_step_ms=%.2f prediction_error_pct=%+.1f\n", f.plannedStepMs,
                    t.stepMs / k, 100.0 * (f.plannedStepMs / (t.stepMs / k) - 1.0));
}

int train(const Flags& f, hostccl::Communicator& world) {
    const uint32_t n = world.size(), me = world.rank();
    checkDegrees(f, n);
    hostccl::ParallelGroups groups(world, n / (f.tp * f.pp), f.tp, f.pp);
    const Place pl = placeOf(f, groups, n);
    Dataset data(f.shape.features, f.shape.classes, f.separation, f.seed);
    Model model(f.shape, groups.tensorParallel(), f.seed, pl.part);
    hostccl::BucketOptions bo;
    bo.bucketBytes = size_t(f.bucketMiB * (1 << 20));
    bo.firstBucketBytes = size_t(f.firstBucketMiB * (1 << 20));
    bo.overlap = !f.noOverlap;
    hostccl::GradientBucketer buckets(groups.dataParallel(), bo, hostccl::makeCompressor(f.compression));
    const std::vector<size_t> bucketId = bucketParameters(model, buckets);
    // One replica has nothing to average: its gradients are used as they stand,
    // without the bucketer's copies.
    const bool averaging = pl.dp > 1;
    const bool print = me == 0 && !f.quiet;
    if (me == 0) printHeader(f, model, groups, n, pl.dp, print);
    auto ready = [&](size_t id) {
        if (averaging) buckets.ready(bucketId[id]);
    };
    std::vector<float> x(size_t(pl.local) * f.shape.features);
    std::vector<uint32_t> labels(pl.local);
    double firstLoss = 0, loss = 0;
    Totals totals;
    for (uint32_t step = 0; step < f.steps; ++step) {
        for (uint32_t i = 0; i < pl.local; ++i)
            labels[i] = data.sample(uint64_t(step) * f.batch + pl.replica * pl.local + i, &x[size_t(i) * f.shape.features]);
        auto t0 = Clock::now();
        double localLoss = computeStep(f, groups, model, pl, x, labels, ready);
        double computeMs = msSince(t0);
        auto t1 = Clock::now();
        if (averaging) buckets.waitAll();
        double exposedMs = msSince(t1);
        model.sgd(f.lr);
        double stepMs = msSince(t0);
        // Outside the timed step: the global loss and the consistency check.
        // The last stage's ranks hold the loss (each TP rank the same): averaged over the replicas.
        if (!groups.isLastStage()) localLoss = 0;
        world.allReduce(std::span<double>(&localLoss, 1)).wait();
        loss = localLoss / (pl.dp * f.tp);
        if (step == 0) firstLoss = loss;
        if (!std::isfinite(loss)) {  // every rank sees the same global loss: all stop here
            if (me == 0)
                std::fprintf(stderr, "train_mlp: the loss is %g after step %u: training diverged at --lr %g; try a smaller one\n",
                             loss, step, double(f.lr));
            return 3;
        }
        if (!parametersAgree(world, model, groups.tensorParallelRank(), pl.stage)) {
            std::fprintf(stderr, "rank %u: parameters differ between ranks after step %u\n", me, step);
            return 1;
        }
        const auto& st = buckets.lastStep();
        if (print)
            std::printf("  %5u %9.5f %9.2f %10.2f %12.2f %9.2f %9.2f %10.1f\n", step, loss, stepMs,
                        computeMs - model.tpWaitMs(), exposedMs, st.commMs, model.tpWaitMs(), st.wireBytes / 1024.0);
        if (step >= 2 || f.steps <= 2)  // the first steps warm caches and connections
            totals.add(stepMs, computeMs - model.tpWaitMs(), exposedMs, st, model.tpWaitMs());
    }
    if (me == 0) printSummary(f, n, pl.dp, firstLoss, loss, totals, buckets.bucketCount());
    return 0;
}

// Plain SGD's stable step shrinks as the blocks widen and deepen: 0.05 up to a hidden
// width of 256 and 2 blocks, in proportion beyond (hidden 1024 and 4 blocks diverged
// at 0.05; 8 blocks at 0.025 and not at 0.0125).
float defaultLearningRate(const ModelShape& s) {
    return 0.05f * std::min(1.0f, 256.0f / float(s.hidden)) * std::min(1.0f, 2.0f / float(std::max(1u, s.blocks)));
}

// --plan FILE[:N]: the plan's choices replace the flags', its stage cut included.
bool applyPlan(Flags* f) {
    std::string path = f->planPath;
    size_t index = 0;
    if (const size_t colon = path.rfind(':'); colon != std::string::npos) {
        char* end = nullptr;
        const unsigned long n = std::strtoul(path.c_str() + colon + 1, &end, 10);
        if (end == path.c_str() + colon + 1 || *end != '\0' || n == 0) {
            std::fprintf(stderr, "train_mlp: --plan %s: the plan number after ':' must be 1 or more\n", path.c_str());
            return false;
        }
        index = n - 1;
        path.resize(colon);
    }
    hostccl::plan::Plan p;
    std::string why;
    if (!hostccl::plan::readPlanFile(path, index, &p, &why, &f->plannedStepMs)) {
        std::fprintf(stderr, "train_mlp: --plan %s\n", why.c_str());
        return false;
    }
    f->tp = p.tp;
    f->pp = p.pp;
    f->stageStarts = p.stageStarts;
    f->planDp = p.dp;
    f->microBatches = p.microBatches;
    f->bucketMiB = double(p.bucketBytes) / (1 << 20);
    f->firstBucketMiB = double(p.firstBucketBytes) / (1 << 20);
    f->compression = p.compression;
    f->noOverlap = !p.overlap;
    return true;
}

int runRank(const Flags& f, hostccl::Communicator& world) {
    try {
        return train(f, world);
    } catch (const hostccl::Error& e) {
        std::fprintf(stderr, "rank %u: %s\n", world.rank(), e.what());
        return 2;
    }
}

// Local ranks as threads of this process, one device each.
int runLocal(const Flags& f) {
    HcclRootInfo root = hostccl::Communicator::createRootInfo();
    std::vector<int> rc(f.ranks, 0);
    std::vector<std::thread> threads;
    for (uint32_t r = 0; r < f.ranks; ++r)
        threads.emplace_back([&, r] {
            const std::string name = "rank " + std::to_string(r);  // shows in top -H and perf
            pthread_setname_np(pthread_self(), name.c_str());
            hostccl::CommOptions o;
            o.device = int32_t(r);
            try {
                hostccl::Communicator world(root, f.ranks, r, o);
                rc[r] = runRank(f, world);
            } catch (const hostccl::Error& e) {
                std::fprintf(stderr, "rank %u: %s\n", r, e.what());
                rc[r] = 2;
            }
        });
    for (auto& t : threads) t.join();
    for (int c : rc)
        if (c != 0) return c;
    return 0;
}

}  // namespace
}  // namespace train_mlp

int main(int argc, char** argv) {
    using namespace train_mlp;
    Flags f;
    CLI::App app{"Data-/tensor-parallel MLP training on hostccl"};
    app.add_option("--ranks", f.ranks, "local ranks as threads (default: ranks from mpirun/srun/torchrun)");
    app.add_option("--steps", f.steps, "training steps")->check(CLI::Range(1u, 1000000u));
    app.add_option("--batch", f.batch, "global batch size")->check(CLI::Range(1u, 1u << 24));
    app.add_option("--features", f.shape.features, "input features")->check(CLI::Range(1u, 1u << 16));
    app.add_option("--classes", f.shape.classes, "classes")->check(CLI::Range(2u, 1u << 16));
    app.add_option("--width", f.shape.width, "model width")->check(CLI::Range(1u, 1u << 16));
    app.add_option("--hidden", f.shape.hidden, "hidden width of each block")->check(CLI::Range(1u, 1u << 20));
    app.add_option("--blocks", f.shape.blocks, "MLP blocks")->check(CLI::Range(0u, 1024u));
    app.add_option("--lr", f.lr, "learning rate (default 0.05, less beyond a hidden width of 256 and 2 blocks)")
        ->check(CLI::PositiveNumber);
    app.add_option("--separation", f.separation, "scale of the class centres against unit noise (smaller: harder)");
    app.add_option("--tp", f.tp, "tensor-parallel degree")->check(CLI::Range(1u, 1u << 16));
    app.add_option("--pp", f.pp, "pipeline stages (blocks shared out evenly; the first stage holds the embedding, "
                                 "the last the head)")
        ->check(CLI::Range(1u, 1u << 16));
    app.add_option("--micro-batches", f.microBatches, "micro-batches per step (gradients accumulated over them)")
        ->check(CLI::Range(1u, 1u << 20));
    app.add_option("--bucket-mb", f.bucketMiB, "bucket size, MiB")->check(CLI::PositiveNumber);
    app.add_option("--first-bucket-mb", f.firstBucketMiB, "first bucket size, MiB")->check(CLI::PositiveNumber);
    app.add_option("--compression", f.compression, "none, fp16, bf16, topk[:ratio], sign");
    app.add_flag("--no-overlap", f.noOverlap, "reduce gradients only after backward (the baseline)");
    app.add_flag("--quiet", f.quiet, "print only the header and the summary");
    app.add_option("--seed", f.seed, "data and initialisation seed");
    app.add_option("--describe-model", f.describePath, "write the model as hostccl-plan reads it (JSON) and exit");
    app.add_option("--plan", f.planPath,
                   "hostccl-plan's plan file, FILE or FILE:N for its N-th plan (default the first): sets --tp, "
                   "--pp and its stage cut, --micro-batches, buckets, --compression and overlap");
    CLI11_PARSE(app, argc, argv);
    if (f.lr == 0) f.lr = defaultLearningRate(f.shape);
    if (!f.planPath.empty() && !applyPlan(&f)) return 2;
    if (!f.describePath.empty()) {
        std::FILE* out = std::fopen(f.describePath.c_str(), "w");
        const std::string text = describeModel(f.shape);
        const bool ok = out != nullptr && std::fwrite(text.data(), 1, text.size(), out) == text.size();
        if (out != nullptr && std::fclose(out) != 0) return 1;
        if (!ok) std::fprintf(stderr, "train_mlp: cannot write %s\n", f.describePath.c_str());
        return ok ? 0 : 1;
    }
    openblas_set_num_threads(1);  // ranks already outnumber cores
    try {
        hostccl::makeCompressor(f.compression);  // a bad spec fails before any rank starts
    } catch (const hostccl::Error& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 2;
    }
    if (f.ranks > 0) return runLocal(f);
    uint32_t rank, size, localRank;
    if (HostcclGetLauncherRank(&rank, &size, &localRank) != HCCL_SUCCESS) {
        std::fprintf(stderr, "train_mlp: no launcher environment found; pass --ranks N for local ranks\n");
        return 2;
    }
    try {
        hostccl::Communicator world = hostccl::Communicator::fromEnvironment();
        return runRank(f, world);
    } catch (const hostccl::Error& e) {
        std::fprintf(stderr, "%s\n", e.what());
        return 2;
    }
}
