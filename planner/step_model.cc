#include "planner/step_model.h"

#include <fmt/format.h>

#include <algorithm>

#include "planner/gradient_sync.h"
#include "planner/stages.h"

namespace hostccl::plan {

bool checkPlan(const Workload& w, const Cluster& c, const Plan& p, std::string* why) {
    const uint32_t rph = c.platform.ranksPerHost;
    std::string bad;
    if (p.dp == 0 || p.tp == 0 || p.pp == 0 || uint64_t(p.dp) * p.tp * p.pp != c.ranks())
        bad = fmt::format("dp {} x tp {} x pp {} is not the {} ranks", p.dp, p.tp, p.pp, c.ranks());
    else if (rph % p.tp != 0)
        bad = fmt::format("tp {} does not divide the {} ranks per host (tensor parallelism stays inside hosts)", p.tp, rph);
    else if (p.pp > w.model.maxStages())
        bad = fmt::format("pp {} is more stages than the model's {} layers can be cut into", p.pp, w.model.maxStages());
    else if (w.globalBatch % p.dp != 0)
        bad = fmt::format("the global batch {} does not divide over dp {}", w.globalBatch, p.dp);
    else if (p.microBatches == 0 || (w.globalBatch / p.dp) % p.microBatches != 0)
        bad = fmt::format("{} micro-batches do not divide the replica's batch of {}", p.microBatches, w.globalBatch / p.dp);
    else if (p.bucketBytes == 0 || p.firstBucketBytes == 0)
        bad = "bucket sizes must be above 0";
    Compression unused;
    if (bad.empty() && parseCompression(p.compression, &unused, &bad)) return true;
    *why = bad;
    return false;
}

namespace {

// Per layer, per micro-batch, on one rank.
struct LayerTimes {
    double fwd = 0, bwd = 0;      // GEMMs
    double tpFwd = 0, tpBwd = 0;  // tensor-parallel allreduces
    uint64_t tpBytes = 0;         // allreduced per micro-batch (both passes)
    double total() const { return fwd + bwd + tpFwd + tpBwd; }
};

struct Stage {
    uint32_t first = 0, end = 0;
    double fwd = 0, bwd = 0, compute = 0, tp = 0;  // per micro-batch, allreduces included in fwd / bwd
    double p2p = 0;                                // receives on its critical path per micro-batch
    uint64_t tpBytes = 0;
};

// A layer's GEMMs for one micro-batch on one TP rank, as a linear layer of
// in -> out (out from its activation, in from its FLOPs: 2 x in x out per sample).
struct LayerGemms {
    GemmShape forward, inputGrad, weightGrad;
};
LayerGemms layerGemms(const LayerSpec& l, uint32_t dtypeBytes, uint32_t tp, uint64_t mb) {
    uint64_t out = std::max<uint64_t>(1, l.activationBytes / dtypeBytes);
    uint64_t in = std::max<uint64_t>(1, uint64_t(l.forwardFlops / (2.0 * double(out)) + 0.5));
    if (l.forwardFlops <= 0) in = 0;  // no GEMM at all
    if (l.tp == TpSplit::Column) out = std::max<uint64_t>(1, out / tp);
    if (l.tp == TpSplit::Row) in = in / tp;
    LayerGemms g;
    g.forward = {mb, out, in, false, false};     // Y = X W
    g.inputGrad = {mb, in, out, false, true};    // dX = dY W^T
    g.weightGrad = {in, out, mb, true, false};   // dW = X^T dY
    return g;
}

// The layers' measured seconds per sample, forward and backward summed (what the
// model's fixed per-micro-batch cost is shared out by).
double measuredSecondsPerSample(const std::vector<LayerSpec>& L) {
    double sum = 0;
    for (const LayerSpec& l : L) sum += l.forwardSeconds + l.backwardSeconds;
    return sum;
}

// A crowded host's cost of each TP allreduce, which grows with the compute since
// the rank's previous one: forward, the layers since the last row layer's;
// backward (in reverse), those since the last column layer's.
void chargeCrowdedTpSyncs(const Cluster& c, const std::vector<LayerSpec>& L, std::vector<LayerTimes>* t) {
    double since = 0;
    for (size_t i = 0; i < L.size(); ++i) {
        since += (*t)[i].fwd;
        if (L[i].tp == TpSplit::Row) (*t)[i].tpFwd += c.syncExtra(since), since = 0;
    }
    since = 0;
    for (size_t i = L.size(); i-- > 0;) {
        since += (*t)[i].bwd;
        if (L[i].tp == TpSplit::Column && i > 0) (*t)[i].tpBwd += c.syncExtra(since), since = 0;
    }
}

std::vector<LayerTimes> layerTimes(const Workload& w, const Cluster& c, CommEstimator& comm, const Plan& p, uint64_t mb) {
    const std::vector<LayerSpec>& L = w.model.layers;
    const GroupLayout tpGroup = tensorLayout(c.platform, p.dp, p.tp, p.pp);
    const double measuredSum = measuredSecondsPerSample(L);
    // Each layer's part of the fixed cost a micro-batch pays (not cut by tp: every rank pays it).
    const double fixed = w.model.microBatchOverhead(mb);
    auto fixedShare = [&](double seconds) { return measuredSum > 0 ? fixed * seconds / measuredSum : 0.0; };
    std::vector<LayerTimes> t(L.size());
    for (size_t i = 0; i < L.size(); ++i) {
        const LayerGemms g = layerGemms(L[i], w.model.dtypeBytes, p.tp, mb);
        // Element-wise work, half each way; a column layer's output is split.
        const double cut = L[i].tp == TpSplit::Column ? p.tp : 1;
        const double ew = c.elementwiseSeconds(double(L[i].elementwiseBytes) * mb / cut,
                                               3.0 * double(L[i].activationBytes) * mb / cut);  // a pass: in, out, written
        if (L[i].forwardSeconds > 0 || L[i].backwardSeconds > 0) {
            // Measured per sample on one core: scaled by the micro-batch and the split.
            const double shard = L[i].split() ? p.tp : 1;
            t[i].fwd = c.computeSeconds(L[i].forwardSeconds * double(mb) / shard + fixedShare(L[i].forwardSeconds));
            t[i].bwd = c.computeSeconds(L[i].backwardSeconds * double(mb) / shard + fixedShare(L[i].backwardSeconds));
        } else {
            t[i].fwd = c.computeSeconds(c.gemm.seconds(g.forward)) + ew / 2;
            // The weight's gradient, and the input's (the first layer's input needs none).
            t[i].bwd = c.computeSeconds(c.gemm.seconds(g.weightGrad) + (i > 0 ? c.gemm.seconds(g.inputGrad) : 0)) + ew / 2;
        }
        if (p.tp == 1) continue;
        if (L[i].tp == TpSplit::Row) {
            t[i].tpBytes = L[i].activationBytes * mb;
            t[i].tpFwd = comm.seconds(tpGroup, CollType::AllReduce, t[i].tpBytes);
        } else if (L[i].tp == TpSplit::Column && i > 0) {
            t[i].tpBytes = L[i - 1].activationBytes * mb;
            t[i].tpBwd = comm.seconds(tpGroup, CollType::AllReduce, t[i].tpBytes);
        }
    }
    if (p.tp > 1) chargeCrowdedTpSyncs(c, L, &t);
    return t;
}

// Bytes a stage ending at layer `last` sends to the next per micro-batch.
uint64_t hopBytes(const LayerSpec& last, uint32_t tp, uint64_t mb) {
    return last.activationBytes * mb / (last.tp == TpSplit::Column ? tp : 1);
}

// A pipeline on hosts running more ranks than cores: a rank waiting for its stage's
// turn leaves its core to the others, so the bubble is not all lost. The step is
// the longer of the dependency chain, each stage's ranks sharing only their host's
// cores among themselves, and the busiest host's compute over its cores (the stages
// its ranks hold; with pooled cores, every rank's over all the cores), plus the
// measured cost of each hand-off while the pipeline fills and drains (a rank handed
// its input waits for a core the scheduler gives late).
double crowdedPipeline(const Cluster& c, const Plan& p, const std::vector<Stage>& stages, const std::vector<double>& hop) {
    const Cluster::CoreGroups g = c.coreGroups();
    const double share = c.coreShare(), cores = g.cores;
    // Slots fill hosts in order, stage-major: group h holds slots [h r, (h + 1) r).
    const uint32_t perGroup = g.ranks, perStage = p.dp * p.tp;
    std::vector<double> cpu(p.pp);  // a micro-batch's compute on a core of its own
    std::vector<uint32_t> together(p.pp, 0);  // the most of a stage's ranks sharing cores
    for (uint32_t h = 0; h < g.groups; ++h) {
        std::vector<uint32_t> here(p.pp, 0);
        for (uint32_t q = h * perGroup; q < (h + 1) * perGroup; ++q) ++here[q / perStage];
        for (uint32_t s = 0; s < p.pp; ++s) together[s] = std::max(together[s], here[s]);
    }
    double fill = 0, slot = 0;
    for (uint32_t s = 0; s < p.pp; ++s) {
        const Stage& st = stages[s];
        cpu[s] = st.compute * share;
        const double running = cpu[s] * std::max(1.0, together[s] / cores);
        const double pass = st.fwd + st.bwd - st.compute + running;
        fill += pass + 2 * hop[s];
        slot = std::max(slot, pass + st.p2p);
    }
    const double chain = fill + (p.microBatches - 1) * slot;
    double busiest = 0;
    for (uint32_t h = 0; h < g.groups; ++h) {
        double work = 0;
        for (uint32_t q = h * perGroup; q < (h + 1) * perGroup; ++q) work += cpu[q / perStage];
        busiest = std::max(busiest, work);
    }
    return std::max(chain, p.microBatches * busiest / cores) + 2.0 * (p.pp - 1) * c.handoffSeconds;
}

// A GPipe pipeline of m micro-batches has at most min(m, pp) stages running at once:
// the most of a core group's ranks that compute at the same time.
uint32_t ranksRunningAtOnce(const Cluster& c, const Plan& p) {
    const uint32_t stages = std::min(p.microBatches, p.pp);
    return std::min<uint32_t>(c.coreGroups().ranks, p.dp * p.tp * stages);
}

// The stages as balancedStages cuts them, each with its per-micro-batch times, and
// the hop from each stage to the next (each way).
struct Pipeline {
    std::vector<Stage> stages;
    std::vector<double> hop;
};

Pipeline cutStages(const Workload& w, const Cluster& c, CommEstimator& comm, const Plan& p, uint64_t mb,
                   const std::vector<LayerTimes>& t, std::vector<uint32_t>* starts) {
    const std::vector<LayerSpec>& L = w.model.layers;
    std::vector<double> cost;
    std::vector<bool> cuts;
    for (const LayerTimes& lt : t) cost.push_back(lt.total());
    for (const LayerSpec& l : L) cuts.push_back(l.cutBefore);
    *starts = balancedStages(cost, p.pp, cuts);
    Pipeline pl{std::vector<Stage>(p.pp), std::vector<double>(p.pp, 0)};
    for (uint32_t s = 0; s < p.pp; ++s) {
        Stage& st = pl.stages[s];
        st.first = (*starts)[s];
        st.end = s + 1 < p.pp ? (*starts)[s + 1] : static_cast<uint32_t>(L.size());
        for (uint32_t i = st.first; i < st.end; ++i) {
            st.fwd += t[i].fwd + t[i].tpFwd;
            st.bwd += t[i].bwd + t[i].tpBwd;
            st.compute += t[i].fwd + t[i].bwd;
            st.tp += t[i].tpFwd + t[i].tpBwd;
            st.tpBytes += t[i].tpBytes;
        }
        if (s + 1 < p.pp)
            pl.hop[s] = comm.sendSeconds(stageHopLayout(c.platform, p.dp, p.tp, s), hopBytes(L[st.end - 1], p.tp, mb)) +
                        c.syncFixed();  // a hand-off: measured no dearer with the compute before it
    }
    for (uint32_t s = 0; s < p.pp; ++s) pl.stages[s].p2p = (s > 0 ? pl.hop[s - 1] : 0) + pl.hop[s];
    return pl;
}

// The pipeline's forward and backward over every micro-batch: every stage's first
// micro-batch in turn, then the slowest stage's pace. Fills the step's compute,
// tp, p2p and bubble parts; returns the pipeline's seconds.
double runPipeline(const Cluster& c, const Plan& p, const Pipeline& pl, Prediction* out) {
    double fill = 0, slot = 0;
    uint32_t slowest = 0;
    for (uint32_t s = 0; s < p.pp; ++s) {
        const Stage& st = pl.stages[s];
        fill += st.fwd + st.bwd + 2 * pl.hop[s];
        const double pace = st.fwd + st.bwd + st.p2p;
        if (pace > slot) slot = pace, slowest = s;
    }
    double pipeline = fill + (p.microBatches - 1) * slot;
    if (c.crowded() && p.pp > 1) pipeline = crowdedPipeline(c, p, pl.stages, pl.hop);
    const Stage& b = pl.stages[slowest];
    // On a crowded host the slowest stage can run faster than its share of a core
    // while others wait: its parts shrink with the pipeline.
    const double busy = p.microBatches * slot, scale = pipeline < busy ? pipeline / busy : 1.0;
    out->computeSeconds = scale * p.microBatches * b.compute;
    out->tpSeconds = scale * p.microBatches * b.tp;
    out->p2pSeconds = scale * p.microBatches * b.p2p;
    out->bubbleSeconds = std::max(0.0, pipeline - busy);
    return pipeline;
}

// On hosts running more ranks than cores, work that overlaps on paper (one stage's
// gradient averaging beside another's backward, one replica's compute beside
// another's) takes turns on the cores: the step is at least the mean busy time of
// a host's ranks, or with pooled cores of every rank (`busy[s]` for a rank of stage
// s: its compute, TP allreduces, averaging work on the cores and optimizer, each at
// its share of a core).
// Measured: 4 ranks, dp2 pp2, on 2 cores took 19.6-21.3 ms of compute where one
// replica's chain alone takes 16.5-17.1 ms; its stage 1 averages 4 MB over shared
// memory while stage 0 runs its backward. A pipeline's hand-offs come on top: the
// cores a rank handed its input waits for sit idle (the probe reads them against
// this same floor). Without them a short pipeline whose busy time decides its step
// came out under: 8 ranks, tp4 pp2 mb2, 21.8 ms predicted, 26.4 measured.
double crowdedHostFloor(const Cluster& c, const Plan& p, const std::vector<double>& busy) {
    const Cluster::CoreGroups g = c.coreGroups();
    const uint32_t perGroup = g.ranks, perStage = p.dp * p.tp;
    double floor = 0;
    for (uint32_t h = 0; h < g.groups; ++h) {
        double sum = 0;
        for (uint32_t q = h * perGroup; q < (h + 1) * perGroup; ++q) sum += busy[q / perStage];
        floor = std::max(floor, sum / perGroup);
    }
    return floor + 2.0 * (p.pp - 1) * c.handoffSeconds;
}

// On a crowded host, the step's wait for its gradients costs more the longer the
// replicas ran apart since their last sync: the whole step (each replica's
// pipeline and TP group meet the scheduler's delays on their own).
double dpWaitExtra(const Cluster& c, const Plan& p, double pipeline) {
    return p.dp == 1 ? 0 : std::max(0.0, c.syncExtra(pipeline) - c.syncFixed());
}

// How the bucketer averages a stage's gradients under plan `p` on cluster `c`.
SyncOptions syncOptions(const Workload& w, const Cluster& c, const Plan& p) {
    SyncOptions so;
    so.bucketBytes = p.bucketBytes;
    so.firstBucketBytes = p.firstBucketBytes;
    std::string unused;
    parseCompression(p.compression, &so.compression, &unused);
    so.overlap = p.overlap;
    so.passSeconds = [&c](double bytes) { return c.coldElementwiseSeconds(bytes); };
    so.reduceSecondsPerByte = c.platform.gamma / c.coreShare();
    so.perCollective = c.syncFixed();
    so.codecs = c.codecs;
    so.onRank = [&c](double idle) { return c.computeSeconds(idle); };
    // The whole model's fp32 gradients through the hook: measured by the model's own
    // processes sharing a host like this cluster's, or else on one idle core.
    const double shared = c.sharingFromModel ? w.model.hostSharing.compressionOverhead(p.compression) : -1;
    const double hook = shared >= 0 ? shared : w.model.compressionOverhead(p.compression);
    so.hookMeasuredHere = shared >= 0;
    so.bucketCopiesMeasured = w.model.dataParallelInStepOverhead && w.model.stepOverheadSeconds > 0;
    if (hook >= 0) so.hookSecondsPerByte = hook / (4.0 * double(std::max<uint64_t>(1, w.model.parameterCount())));
    return so;
}

// The optimizer's seconds on a rank holding `weights` bytes of parameters.
double optimizerSeconds(const Workload& w, const Cluster& c, uint64_t weights) {
    if (w.model.stepOverheadSeconds > 0)  // measured: this rank's share of it, by its weights
        return c.computeSeconds(w.model.stepOverheadSeconds * double(weights) /
                                double(w.model.parameterCount() * w.model.dtypeBytes));
    // It reads weights, gradients and its state and writes weights and state.
    const double bytes = double(weights) * (3 + 2 * w.model.optimizerStatePerParam);
    return c.coldElementwiseSeconds(bytes);
}

}  // namespace

Prediction predictStep(const Workload& w, const Cluster& cluster, CommEstimator& comm, const Plan& p) {
    const std::vector<LayerSpec>& L = w.model.layers;
    const uint64_t mb = w.globalBatch / p.dp / p.microBatches;
    // Small micro-batches share cores more cheaply; a short pipeline's ranks crowd them less.
    const Cluster c = cluster.forMicroBatch(mb).withRunningAtOnce(ranksRunningAtOnce(cluster, p));
    const std::vector<LayerTimes> t = layerTimes(w, c, comm, p, mb);
    Prediction out;
    const Pipeline pl = cutStages(w, c, comm, p, mb, t, &out.stageStarts);
    const double pipeline = runPipeline(c, p, pl, &out);

    // Gradient averaging per stage, after its last backward, which ends earlier the
    // further the stage is from stage 0 (the backward still travels toward it).
    SyncOptions so = syncOptions(w, c, p);
    const GroupLayout dpGroup = dataLayout(c.platform, p.dp, p.tp, p.pp);
    so.collectiveOnCores = dpGroup.hosts == 1;
    double step = 0, slack = 0;
    std::vector<double> busy(p.pp);  // per rank of each stage, for a crowded host
    for (uint32_t s = 0; s < p.pp; ++s) {
        const Stage& st = pl.stages[s];
        std::vector<Gradient> grads;
        double at = 0;
        uint64_t weights = 0, activations = 0;
        for (uint32_t i = st.end; i-- > st.first;) {
            at += t[i].bwd + t[i].tpBwd;
            const uint64_t bytes = L[i].params * w.model.dtypeBytes / (L[i].split() ? p.tp : 1);
            weights += bytes;
            activations += L[i].activationBytes * mb / (L[i].tp == TpSplit::Column ? p.tp : 1);
            if (bytes > 0) grads.push_back({bytes, at, L[i].split() ? 1u : 0u});
        }
        so.backwardSeconds = st.bwd;
        const SyncResult sync = simulateGradientSync(comm, dpGroup, grads, so);
        const double optimizer = optimizerSeconds(w, c, weights);
        const double finish = pipeline - slack + sync.exposedSeconds + dpWaitExtra(c, p, pipeline) + optimizer;
        if (finish > step) step = finish, out.optimizerSeconds = optimizer;
        busy[s] = p.microBatches * (st.compute + st.tp) + sync.coreSeconds + optimizer;
        slack += st.bwd + pl.hop[s];
        out.dpCommSeconds = std::max(out.dpCommSeconds, sync.commSeconds);
        // 1F1B: stage s holds the activations of at most pp - s micro-batches at once.
        const uint64_t inFlight = std::min<uint64_t>(p.microBatches, p.pp - s);
        const uint64_t memory = uint64_t(weights * (2 + w.model.optimizerStatePerParam)) + sync.extraMemory + activations * inFlight;
        out.memoryBytes = std::max(out.memoryBytes, memory);
        const uint64_t tpWire = p.tp > 1 ? 2 * (p.tp - 1) * st.tpBytes / p.tp : 0;
        const uint64_t hops = (s + 1 < p.pp ? hopBytes(L[st.end - 1], p.tp, mb) : 0) +
                              (s > 0 ? hopBytes(L[st.first - 1], p.tp, mb) : 0);
        out.wireBytes = std::max(out.wireBytes, sync.wireBytes + p.microBatches * (tpWire + hops));
    }
    // The stage that finishes last sets the step; what it waits beyond the pipeline
    // and its own exposed averaging and optimizer (a stage nearer the end of the
    // pipeline finishing later than stage 0, or on a crowded host the cores busy
    // with other ranks' work) counts as exposed averaging.
    if (c.crowded()) step = std::max(step, crowdedHostFloor(c, p, busy));
    out.optimizerSeconds = std::min(out.optimizerSeconds, step - pipeline);
    out.dpExposedSeconds = step - pipeline - out.optimizerSeconds;
    out.stepSeconds = step;
    return out;
}

}  // namespace hostccl::plan
