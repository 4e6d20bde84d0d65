#include "sim/bulk_probe.h"

#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <thread>

#include "common/cpu_clock.h"
#include "common/reduce.h"
#include "hccl/hccl.h"
#include "hostccl/hostccl.h"

namespace hostccl::sim {

namespace {
constexpr size_t kBulkBytes = 64 << 20;
constexpr size_t kSmallestCopy = 128 << 10;
constexpr int kRuns = 3;

// Seconds per byte of `kernel` on `bytes`, best of a few runs after one that faults
// the pages in; each run repeats a small kernel to 64 MiB, above the clock's noise.
template <typename Kernel>
double perByte(size_t bytes, Kernel kernel) {
    kernel();
    const size_t repeats = std::max<size_t>(1, kBulkBytes / bytes);
    double best = 1e9;
    for (int i = 0; i < kRuns; ++i) {
        const double t0 = threadCpuSeconds();
        for (size_t k = 0; k < repeats; ++k) kernel();
        best = std::min(best, (threadCpuSeconds() - t0) / double(repeats));
    }
    return best / double(bytes);
}

// Copies of growing size: the bulk copy rate (64 MiB) and, per working set (source
// and destination), how far a copy is from the in-cache rate toward it.
void measureCopies(BulkRates* out) {
    std::vector<char> a(kBulkBytes, 1), b(kBulkBytes, 2);
    std::vector<std::pair<uint64_t, double>> costs;
    for (size_t s = kSmallestCopy; s <= kBulkBytes; s *= 2)
        costs.emplace_back(2 * s, perByte(s, [&] { std::memcpy(b.data(), a.data(), s); }));
    const double inCache = costs.front().second, bulk = costs.back().second;
    out->copyBeta = bulk;
    out->curve.clear();
    if (bulk < inCache * 1.3) return;  // memory keeps up with the cache: no bulk regime
    double highest = 0;  // noise must not make the curve go back
    for (const auto& [bytes, cost] : costs) {
        highest = std::max(highest, std::clamp((cost - inCache) / (bulk - inCache), 0.0, 1.0));
        out->curve.emplace_back(bytes, highest);
    }
}

void measureReduction(BulkRates* out) {
    const size_t count = kBulkBytes / sizeof(float);
    std::vector<float> a(count, 1.0f), b(count, 2.0f), c(count);
    ReduceFn sum = reduceFunction(HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM);
    out->gamma = perByte(kBulkBytes, [&] { sum(c.data(), a.data(), b.data(), count); });
}

// A flow's time per message and the part of a core its work holds at each end.
struct FlowTiming {
    double perMessage = 0;      // seconds, the best run
    double meanPerMessage = 0;  // seconds, over every run but the first
    double cpuShare = 0;        // CPU seconds per wall second at one end, the mean of both over every run but the first
};

// Rank `a` sends `streak` messages of `bytes` to rank `b`, which answers with 8 bytes,
// `runs` + 1 times; on `a`, the best time per message. A streak keeps a flow going
// as an op's steps do (a TCP window stays open). `both`: each message is an exchange,
// `a` and `b` sending to each other at once (HcclBatchSendRecv), as a ring's step
// between two hosts does. Both ends count their process's CPU time over the streak;
// `b`'s answer carries its own (nanoseconds), so `a` gets the mean of the two ends,
// or, with `endsHere` > 1 (ranks as threads: this process's CPU time covers that many
// ends), its own over that many. Every other rank returns at once.
HcclResult timeFlow(HcclComm comm, uint32_t a, uint32_t b, size_t bytes, bool both, int streak, int runs,
                    int endsHere, FlowTiming* out) {
    uint32_t me = 0;
    if (HcclGetRankId(comm, &me) != HCCL_SUCCESS) return HCCL_E_PARA;
    if (me != a && me != b) return HCCL_SUCCESS;
    const uint32_t other = me == a ? b : a;
    std::vector<char> buf(bytes, 3), in(both ? bytes : 0);
    HcclSendRecvItem items[2] = {{HCCL_SEND, buf.data(), bytes, HCCL_DATA_TYPE_INT8, other},
                                 {HCCL_RECV, in.data(), bytes, HCCL_DATA_TYPE_INT8, other}};
    uint64_t reply = 0;
    aclrtStream stream = nullptr;
    if (aclrtCreateStream(&stream) != ACL_SUCCESS) return HCCL_E_RUNTIME;
    auto wait = [&](HcclResult rc) {
        return rc == HCCL_SUCCESS && aclrtSynchronizeStream(stream) != ACL_SUCCESS ? HCCL_E_RUNTIME : rc;
    };
    HcclResult rc = HCCL_SUCCESS;
    double best = 1e9, cpu = 0, wall = 0;
    for (int i = 0; i <= runs && rc == HCCL_SUCCESS; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        const double c0 = processCpuSeconds();
        for (int k = 0; k < streak && rc == HCCL_SUCCESS; ++k)
            rc = both      ? HcclBatchSendRecv(items, 2, comm, stream)
                 : me == a ? HcclSend(buf.data(), bytes, HCCL_DATA_TYPE_INT8, b, comm, stream)
                           : HcclRecv(buf.data(), bytes, HCCL_DATA_TYPE_INT8, a, comm, stream);
        rc = wait(rc);
        const double used = processCpuSeconds() - c0;
        reply = uint64_t(used * 1e9);
        if (rc == HCCL_SUCCESS)
            rc = wait(me == a ? HcclRecv(&reply, 1, HCCL_DATA_TYPE_UINT64, b, comm, stream)
                              : HcclSend(&reply, 1, HCCL_DATA_TYPE_UINT64, a, comm, stream));
        const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (i == 0) continue;  // the first run connects and faults pages in
        best = std::min(best, t / streak);
        cpu += endsHere > 1 ? used : used + double(reply) * 1e-9;
        wall += t;
    }
    aclrtDestroyStream(stream);
    if (me == a && runs > 0)
        *out = {best, wall / (runs * streak), wall > 0 ? std::min(1.0, cpu / (std::max(endsHere, 2) * wall)) : 0};
    return rc;
}

HcclResult barrier(HcclComm comm) {
    aclrtStream stream = nullptr;
    if (aclrtCreateStream(&stream) != ACL_SUCCESS) return HCCL_E_RUNTIME;
    HcclResult rc = HcclBarrier(comm, stream);
    if (rc == HCCL_SUCCESS && aclrtSynchronizeStream(stream) != ACL_SUCCESS) rc = HCCL_E_RUNTIME;
    aclrtDestroyStream(stream);
    return rc;
}

// Every rank's part of flows between `pairs` (first sends to second), all at once, each
// `streak` messages in a row, the best of `runs`: threads here (one per rank), else this
// process's rank; the first pair's timing on its sender.
using Pair = std::pair<uint32_t, uint32_t>;
HcclResult runFlows(const std::vector<HcclComm>& comms, const std::vector<Pair>& pairs, size_t bytes, bool both,
                    int streak, int runs, FlowTiming* first) {
    const int endsHere = comms.size() > 1 ? int(2 * pairs.size()) : 1;
    std::vector<HcclResult> rcs(comms.size(), HCCL_SUCCESS);
    std::vector<FlowTiming> timings(comms.size());
    // Every rank waits for the flows to end: one that went on to the next measurement
    // would run its flows beside these (two ranks of host 0 streaming at once read a
    // lone 1 Gbit/s flow at half its rate).
    auto run = [&](size_t c) {
        uint32_t me = 0;
        HcclGetRankId(comms[c], &me);
        for (const Pair& p : pairs)
            if (me == p.first || me == p.second)
                rcs[c] = timeFlow(comms[c], p.first, p.second, bytes, both, streak, runs, endsHere, &timings[c]);
        const HcclResult after = barrier(comms[c]);  // after a failure too: every rank takes part
        if (rcs[c] == HCCL_SUCCESS) rcs[c] = after;
    };
    std::vector<std::thread> threads;
    for (size_t c = 1; c < comms.size(); ++c) threads.emplace_back(run, c);
    run(0);
    for (std::thread& t : threads) t.join();
    for (size_t c = 0; c < comms.size(); ++c) {
        uint32_t me = 0;
        HcclGetRankId(comms[c], &me);
        if (me == pairs[0].first) *first = timings[c];
        if (rcs[c] != HCCL_SUCCESS) return rcs[c];
    }
    return HCCL_SUCCESS;
}

HcclResult exchange(const std::vector<HcclComm>& comms, uint32_t a, uint32_t b, size_t bytes, bool both,
                    int streak, int runs, FlowTiming* out) {
    return runFlows(comms, {{a, b}}, bytes, both, streak, runs, out);
}

// Seconds per byte between ranks `a` and `b` with every other rank idle, in cache
// and in bulk (four kBulkBytes messages in a row, the best of kRuns).
// With each its CPU share (FlowTiming::cpuShare).
struct PairRates {
    double cacheBeta = 0, bulkBeta = 0;
    double cacheCpu = 0, bulkCpu = 0;
};

HcclResult measureBulkRate(const std::vector<HcclComm>& comms, uint32_t a, uint32_t b, bool both, PairRates* out) {
    FlowTiming bulk;
    const HcclResult rc = exchange(comms, a, b, kBulkBytes, both, 4, kRuns, &bulk);
    out->bulkBeta = bulk.perMessage / double(kBulkBytes);
    out->bulkCpu = bulk.cpuShare;
    return rc;
}

// Shared memory in cache: a streak of 16 single copies of 1 MiB (both ends' buffers
// stay in cache), each one's share of the streak's time, the best of 15; a message's
// alpha is a few per cent of it. A difference of single 64 KiB and 256 KiB (or 1 MiB)
// messages, as the init probe takes, read the scheduler's noise on a crowded host (8
// thread ranks on 2 cores: 3.7, 17.5 and 503 GB/s in three probes).
HcclResult measureShmPair(const std::vector<HcclComm>& comms, uint32_t a, uint32_t b, PairRates* out) {
    constexpr size_t kCached = 1 << 20;
    FlowTiming cached;
    HcclResult rc = exchange(comms, a, b, kCached, false, 16, 15, &cached);
    if (cached.perMessage > 0) out->cacheBeta = cached.perMessage / double(kCached);
    return rc == HCCL_SUCCESS ? measureBulkRate(comms, a, b, false, out) : rc;
}

// Between hosts in cache: a streak of 256 KiB messages (one buffer reused), each
// one's share of the streak's time, the best of 15. Over TCP a difference of single
// messages is no measure: up to 64 KiB fits the socket buffers and costs little more
// than alpha, while 128 KiB waits for the receiver to drain (15 vs 64-95 us between
// two namespaces here), and from 256 KiB on one run's noise is the whole difference
// (3.6, 2.4 and 512 GB/s in three probes). A streak of 1 MiB messages read half the
// rate an op's single exchanges of 512 KiB reach (unshaped 2-host validation: 11-14
// of 45 points within 15 %, against 16-24 with 256 KiB).
constexpr size_t kNetCached = 256 << 10;
HcclResult measureNetPair(const std::vector<HcclComm>& comms, uint32_t a, uint32_t b, bool both, PairRates* out) {
    FlowTiming cached;
    HcclResult rc = exchange(comms, a, b, kNetCached, both, 16, 15, &cached);
    out->cacheBeta = cached.perMessage / double(kNetCached);
    out->cacheCpu = cached.cpuShare;
    return rc == HCCL_SUCCESS ? measureBulkRate(comms, a, b, both, out) : rc;
}

// The first `count` ranks of host `host` (fewer when it has fewer).
std::vector<uint32_t> ranksOnHost(HcclComm comm, uint32_t host, size_t count) {
    uint32_t n = 0, h = 0;
    std::vector<uint32_t> out;
    HcclGetRankSize(comm, &n);
    for (uint32_t r = 0; r < n && out.size() < count; ++r)
        if (HostcclCommGetRankHost(comm, r, &h) == HCCL_SUCCESS && h == host) out.push_back(r);
    return out;
}

// What one host sends at most, all flows together (its NIC, or a shaper on its link):
// two ranks of host 0 each streaming to a rank of host 1 as measureNetPair does, at
// once: both flows' bytes over the time until the later one ends (runFlows returns
// after a barrier). Not one flow's own time: flows need not share fairly (under CUBIC
// behind a shaper's deep queue one took the link while the other waited, and read as
// two flows at twice the shaper's rate). Where two flows get less than 1.5 times one
// flow's rate (`oneFlowBeta`), the host's link is their limit: its rate, bytes per
// second; else 0 (not a limit seen here). Needs two ranks on each of hosts 0 and 1.
HcclResult measureNicRate(const std::vector<HcclComm>& comms, double oneFlowBeta, double* bytesPerSec) {
    constexpr int kStreak = 16, kTimedRuns = 15;
    *bytesPerSec = 0;
    const std::vector<uint32_t> from = ranksOnHost(comms[0], 0, 2), to = ranksOnHost(comms[0], 1, 2);
    if (from.size() < 2 || to.size() < 2) return HCCL_SUCCESS;
    FlowTiming two;
    const auto t0 = std::chrono::steady_clock::now();
    const HcclResult rc =
        runFlows(comms, {{from[0], to[0]}, {from[1], to[1]}}, kNetCached, false, kStreak, kTimedRuns, &two);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double perFlow = double(kNetCached) * kStreak * (kTimedRuns + 1);  // timeFlow's untimed first run too
    const double together = two.meanPerMessage > 0 && wall > 0 ? 2 * perFlow / wall : 0;  // > 0: the first flow ran here
    if (together > 0 && oneFlowBeta > 0 && together < 1.5 / oneFlowBeta) *bytesPerSec = together;
    return rc;
}

// The ranks an 8-byte ring times its steps among: host 0's (the host of rank 0),
// whose steps are all shared memory, or every rank, whose flat ring crosses between
// hosts at every step (a step lasts as long as its slowest message: a crossing one).
enum class StepRing { FirstHost, Everyone };

std::vector<uint32_t> stepRingRanks(HcclComm comm, StepRing which) {
    uint32_t n = 0, host = 0;
    std::vector<uint32_t> out;
    if (HcclGetRankSize(comm, &n) != HCCL_SUCCESS) return out;
    for (uint32_t r = 0; r < n; ++r)
        if (which == StepRing::Everyone || (HostcclCommGetRankHost(comm, r, &host) == HCCL_SUCCESS && host == 0))
            out.push_back(r);
    return out;
}

// One rank's part of timing a step of a real op: an 8-byte ring allreduce among the
// ranks `which` names (a sub-communicator per `round` with the ring forced: 2(k - 1)
// steps, each waiting for the one before it), 200 back to back on the stream as a perf
// tool's loop runs them, the best of kRuns; on rank 0, the time per step. Ranks not in
// the ring return at once.
HcclResult timeRingStep(HcclComm comm, StepRing which, uint32_t round, double* perStep) {
    constexpr int kOps = 200, kWarmup = 50;
    // "SIMSTEP", one per ring and round
    const uint64_t subCommId = 0x5349'4d53'5445'5000 + (which == StepRing::Everyone ? 0x100 : 0) + round;
    uint32_t me = 0;
    if (HcclGetRankId(comm, &me) != HCCL_SUCCESS) return HCCL_E_PARA;
    std::vector<uint32_t> ring = stepRingRanks(comm, which);
    const auto at = std::find(ring.begin(), ring.end(), me);
    if (at == ring.end() || ring.size() < 2) return HCCL_SUCCESS;
    HcclCommConfig config;
    HcclCommConfigInit(&config);
    std::snprintf(config.hcclAlgo, sizeof config.hcclAlgo, "allreduce=level0:NA;level1:ring");
    HcclComm sub = nullptr;
    HcclResult rc = HcclCreateSubCommConfig(&comm, uint32_t(ring.size()), ring.data(), subCommId,
                                            uint32_t(at - ring.begin()), &config, &sub);
    if (rc != HCCL_SUCCESS) return rc;
    aclrtStream stream = nullptr;
    if (aclrtCreateStream(&stream) != ACL_SUCCESS) {
        HcclCommDestroy(sub);
        return HCCL_E_RUNTIME;
    }
    uint64_t v = 1;
    double best = 1e9;
    for (int run = 0; run <= kRuns && rc == HCCL_SUCCESS; ++run) {
        const int ops = run == 0 ? kWarmup : kOps;
        const auto t0 = std::chrono::steady_clock::now();
        for (int s = 0; s < ops && rc == HCCL_SUCCESS; ++s)
            rc = HcclAllReduce(&v, &v, 1, HCCL_DATA_TYPE_UINT64, HCCL_REDUCE_MAX, sub, stream);
        if (rc == HCCL_SUCCESS && aclrtSynchronizeStream(stream) != ACL_SUCCESS) rc = HCCL_E_RUNTIME;
        const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (run > 0) best = std::min(best, t / ops);
    }
    aclrtDestroyStream(stream);
    HcclCommDestroy(sub);
    if (me == 0) *perStep = best / double(2 * (ring.size() - 1));
    return rc;
}

// Every rank's part of timeRingStep (each of `comms` on a thread: every rank here, or
// this process's one), in kRounds rounds on fresh threads, the best round on rank 0: where
// the scheduler places two ranks that wait on each other on one core, every step
// pays a switch (2 thread ranks: 5 us a step against 1.3 in some probes), a
// placement that holds for a thread's life.
HcclResult ringStep(const std::vector<HcclComm>& comms, StepRing which, double* perStep) {
    constexpr int kRounds = 5;
    double best = 0;
    for (int round = 0; round < kRounds; ++round) {
        std::vector<HcclResult> rcs(comms.size(), HCCL_SUCCESS);
        std::vector<double> steps(comms.size(), 0);
        std::vector<std::thread> ranks;
        for (size_t c = 0; c < comms.size(); ++c)
            ranks.emplace_back([&, c] { rcs[c] = timeRingStep(comms[c], which, uint32_t(round), &steps[c]); });
        for (std::thread& t : ranks) t.join();
        for (HcclResult rc : rcs)
            if (rc != HCCL_SUCCESS) return rc;
        if (steps[0] > 0 && (best == 0 || steps[0] < best)) best = steps[0];
    }
    *perStep = best;
    return HCCL_SUCCESS;
}

// The part of a flow's time its TCP work holds a core at each end, as the simulator
// charges it (LinkModel::cpuShare): the CPU time each end's process spent on the
// one-way flow over its wall time (`cpu`), and where both directions at once run
// slower than one (the kernel's work for the two flows queueing on the same cores:
// network-namespace hosts sharing one machine's), the rest of the core in proportion:
// an exchange twice as slow as one flow means each end's work filled its core. (Up to
// 2026-12-04 the CPU part was taken as half where an exchange is no slower: on hosts
// of half a core that made a 1 Gbit/s shaped flow's work last as long as the flow, and
// a host sending and receiving at once twice as long, where each end measured 0.1.)
double cpuShareOf(double oneWay, double exchanged, double cpu) {
    const double slower = oneWay > 0 && exchanged > 0 ? std::clamp(exchanged / oneWay - 1, 0.0, 1.0) : 0.0;
    const double own = std::clamp(cpu, 0.0, 1.0);
    return own + (1 - own) * slower;
}
}  // namespace

bool measureBulk(const std::vector<HcclComm>& comms, Platform* p, bool shmProbed, std::string* why) {
    uint32_t me = 0;
    HcclGetRankId(comms[0], &me);
    BulkRates r;
    if (me == 0) {
        measureCopies(&r);
        measureReduction(&r);
    }
    HcclResult rc = HCCL_SUCCESS;
    PairRates shm{p->shm.beta, 0}, net{p->net.beta, 0}, netBoth;
    if (p->ranksPerHost > 1) rc = measureShmPair(comms, 0, 1, &shm);
    if (rc == HCCL_SUCCESS && p->hosts > 1) rc = measureNetPair(comms, 0, p->ranksPerHost, false, &net);
    const bool tcp = p->hosts > 1 && p->netClass == LinkClass::Tcp;
    if (rc == HCCL_SUCCESS && tcp) rc = measureNetPair(comms, 0, p->ranksPerHost, true, &netBoth);
    double nic = 0;
    if (rc == HCCL_SUCCESS && p->hosts > 1) rc = measureNicRate(comms, net.cacheBeta, &nic);
    double hostStep = 0, netStep = 0;
    if (rc == HCCL_SUCCESS && p->ranksPerHost > 1) rc = ringStep(comms, StepRing::FirstHost, &hostStep);
    if (rc == HCCL_SUCCESS && p->hosts > 1) rc = ringStep(comms, StepRing::Everyone, &netStep);
    if (rc != HCCL_SUCCESS) {
        *why = fmt::format("exchanging up to {} MiB to measure link rates failed: {}", kBulkBytes >> 20,
                           HcclGetErrorString(rc));
        return false;
    }
    r.shmBeta = shm.bulkBeta;
    r.netBeta = net.bulkBeta;
    if (tcp) {
        p->net.cpuShare = cpuShareOf(net.cacheBeta, netBoth.cacheBeta, net.cacheCpu);
        r.netCpuShare = cpuShareOf(net.bulkBeta, netBoth.bulkBeta, net.bulkCpu);
    }
    p->bulk = r;
    p->net.beta = net.cacheBeta;
    if (p->nicBytesPerSec <= 0) p->nicBytesPerSec = nic;
    // A step inside a host costs what a step of a real op costs, not what the init
    // probe's shift between idle links does: the peer waited for must be scheduled
    // (with more ranks than cores, after the ranks ahead of it), and the op's own
    // costs are spread over its steps (measured: 8 bytes, 2 ranks, 1.3 us a step
    // against the init probe's 0.2; 8 ranks on 2 cores, 5 us against 0.4).
    if (hostStep > 0) {
        p->shm.alpha = std::max(p->shm.alpha, hostStep);
        p->shm.alphaCrowded = std::max(p->shm.alphaCrowded, hostStep);
    }
    // With every rank running, a step of a flat ring over them all is the least any
    // message takes (LinkModel::step), not an alpha added to its bytes: a real op's
    // waits overlap its bytes on the wire (8 ranks on 4 namespace hosts sharing 2
    // cores: 37-45 us a step of an 8-byte op, where 8 KiB through a 1 Gbit/s shaper
    // take 68 us a step, the wire's 65 and 3). Shared memory too: a ring's message
    // inside a host waits for its receiver as long as a crossing one does, there.
    p->net.step = p->shm.step = netStep;
    if (p->crowded() || !shmProbed) p->shm.beta = shm.cacheBeta;
    // A single copy is a memcpy: no faster than the copy kernel in cache (a difference
    // of two timings can read faster on a crowded host).
    p->shm.beta = std::max(p->shm.beta, p->copyBeta);
    return true;
}

}  // namespace hostccl::sim
