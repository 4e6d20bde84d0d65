#include "planner/crowding_probe.h"

#include <algorithm>
#include <vector>

namespace hostccl::plan {

namespace {
// Rounds of each interval, alternating, so a change on the host meets both alike.
constexpr int kRounds = 12;
// The sync cost's intervals: none, about 1 ms and 5 ms of compute on an idle core
// between collectives, as many rounds of each (the longer in fewer iterations).
struct Interval {
    int gemms, iters;
};
constexpr Interval kNone{0, 40}, kShort{3, 40}, kLong{16, 20};
// The pipeline: 2 sgemms forward and 4 backward per micro-batch and stage (about
// what 4 stages of the example MLP's 4 micro-batches do), a few steps of it.
constexpr int kForwardGemms = 2, kPipelineSteps = 5, kPipelineRounds = 3;

// Every rank runs `in.iters` segments, each followed (`withSync`) by an allreduce.
double timeRounds(ProbeHost& host, const Interval& in, bool withSync) {
    return host.together([&](ProbeRank& r, uint32_t) {
        for (int k = 0; k < in.iters; ++k) {
            r.gemms(in.gemms);
            if (withSync) r.allReduce();
        }
    });
}

struct IntervalCost {
    double computeAlone = 1e9;  // one segment on an idle core, seconds (best round)
    double computeShared = 0;   // one segment's CPU seconds with every rank computing (median round)
    std::vector<double> sharedRounds;
    double perSync = 0;         // seconds a collective adds (mean)
};

// One round of `in`: every rank's segments, each followed by a collective, timed
// against the CPU their compute took. What the wall time has beyond that compute
// spread over the cores is what the collectives cost: the op, the ranks' waits for
// each other, the cores left idle meanwhile. (Read as the difference to the same
// segments timed without collectives, it carried that run's own noise too, and the
// ragged finish of ranks no collective holds together: 40-160 us a segment at 8
// ranks on 2 cores, taken for compute slowdown.) Sums into `c`; the callers divide.
void measureRound(ProbeHost& host, const Interval& in, double cores, IntervalCost* c) {
    const uint32_t n = host.size();
    c->computeAlone = std::min(c->computeAlone, host.alone([&](ProbeRank& r) { r.gemms(in.gemms * in.iters); }) / in.iters);
    host.takeComputeCpu();
    const double wall = timeRounds(host, in, true);
    const double cpu = host.takeComputeCpu();
    c->sharedRounds.push_back(cpu / n / in.iters);
    c->perSync += (wall - cpu / std::min(cores, double(n))) / in.iters;
}

// The sync costs: means over rounds (where the scheduler puts the ranks varies from
// round to round, and a median of rounds still moved 4x between probes); the
// idle-core compute time: the best round (other load only adds to it); the shared
// compute: the median round (the 2-core test VM's host takes its cores for spells at a time,
// and the CPU clocks count that; a mean of rounds read the slowdown 1.87x where
// probes minutes before read 1.02-1.12x).
void measureIntervals(ProbeHost& host, double cores, IntervalCost* none, IntervalCost* s, IntervalCost* l) {
    for (int round = 0; round < kRounds; ++round) {
        measureRound(host, kNone, cores, none);
        measureRound(host, kShort, cores, s);
        measureRound(host, kLong, cores, l);
    }
    for (IntervalCost* c : {none, s, l}) {
        std::vector<double>& r = c->sharedRounds;
        std::nth_element(r.begin(), r.begin() + r.size() / 2, r.end());
        c->computeShared = r[r.size() / 2];
        c->perSync /= kRounds;
    }
}

// One step of a pipeline with rank s as stage s: every micro-batch forward, then
// every one backward in reverse (GPipe, as train_mlp), each handed on.
void pipelineStep(ProbeRank& r, uint32_t me, uint32_t n, int microBatches) {
    for (int m = 0; m < microBatches; ++m) {
        if (me > 0) r.recv(me - 1);
        r.gemms(kForwardGemms);
        if (me + 1 < n) r.send(me + 1);
    }
    for (int m = 0; m < microBatches; ++m) {
        if (me + 1 < n) r.recv(me + 1);
        r.gemms(2 * kForwardGemms);
        if (me > 0) r.send(me - 1);
    }
}

// Seconds per hand-off while the pipeline fills and drains, beyond the longer of
// its dependency chain at a core per stage and its busiest host's compute over its
// cores. Every rank of the job is a stage, in job order (under a launcher a pipeline
// across the hosts as plans place theirs, with 2 (n - 1) hand-offs to spread the
// scheduler's delays over: with a stage per rank of one host, 4 hosts of 2 read
// 2.5-3.0 ms a hand-off from two, and a pipeline over 4 hosts of dp2 pp4 mb8 then came
// out 36 % over, all of it the hand-offs' charge).
double measureHandoff(ProbeHost& host, double cores) {
    const uint32_t n = host.jobSize(), local = host.size();
    const int mb = int(n);
    double pass = 1e9, mean = 0;  // one stage's micro-batch, forward and backward, alone
    host.acrossJob([&](ProbeRank& r, uint32_t s) { pipelineStep(r, s, n, mb); });  // warm
    for (int round = 0; round < kPipelineRounds; ++round) {
        pass = std::min(pass, host.alone([&](ProbeRank& r) { r.gemms(3 * kForwardGemms * kPipelineSteps); }) / kPipelineSteps);
        mean += host.acrossJob([&](ProbeRank& r, uint32_t s) {
                    for (int k = 0; k < kPipelineSteps; ++k) pipelineStep(r, s, n, mb);
                }) / kPipelineSteps / kPipelineRounds;
    }
    const double chain = double(n + mb - 1) * pass, compute = double(local) * mb * pass / std::min(cores, double(local));
    return std::max(0.0, (mean - std::max(chain, compute)) / (2.0 * double(n - 1)));
}
}  // namespace

bool measureHostSharing(uint32_t threadRanks, double cores, HostSharing* out, std::string* why) {
    ProbeHost host;
    if (host.open(threadRanks, why)) {
        const uint32_t count = host.size();
        timeRounds(host, kShort, true);  // warm: links, pages, caches
        IntervalCost none, s, l;
        measureIntervals(host, cores, &none, &s, &l);
        // The part per second of compute from the long interval (a line through 0:
        // the slope between the two moved from 0 to 8 % probe to probe, the ratio at
        // 1.3-15 ms stayed within 12-17 %), the fixed part what the short one has beyond it.
        out->syncPerCompute = std::max(0.0, l.perSync / l.computeAlone);
        out->syncBase = std::max(0.0, s.perSync - out->syncPerCompute * s.computeAlone);
        out->syncShortCompute = s.computeAlone;
        out->syncFloor = none.perSync;
        // The slowdown: a segment's CPU with every rank computing over its CPU alone
        // (caches and memory shared; the cores' sharing is the plan's own part).
        out->computeSlowdown = std::max(1.0, s.computeShared / s.computeAlone);
        out->handoff = count > 1 ? measureHandoff(host, cores) : 0.0;
    }
    return host.close(why);
}

}  // namespace hostccl::plan
