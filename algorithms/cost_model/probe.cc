#include "algorithms/cost_model/probe.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <vector>

#include "algorithms/direct/process_board.h"
#include "algorithms/halving_doubling/recursive_doubling.h"
#include "common/reduce.h"

namespace hostccl {

namespace {
using Clock = std::chrono::steady_clock;
// Beta comes from the difference of two sizes both on the large-message path (shm
// copies them once, straight from the sender's buffer, after a descriptor round
// trip that a difference cancels).
constexpr size_t kMidBytes = 64 * 1024, kLargeBytes = 256 * 1024;
constexpr int kSmallWarmup = 5, kSmallRuns = 12, kLargeRuns = 4, kKernelRuns = 3;
// Hundreds of ranks crowding a host make every shift a round of the scheduler over
// all of them: the probe then runs fewer shifts (its numbers are the scheduler's
// anyway), so creating 1024 thread ranks stays within seconds.
constexpr uint32_t kQuickProbeRanks = 256;
struct Runs {
    int warmup, small, large;
};
Runs runsFor(const CommView& view) {
    if (view.crowded && view.size >= kQuickProbeRanks) return {1, 4, 2};
    return {kSmallWarmup, kSmallRuns, kLargeRuns};
}

double seconds(Clock::time_point a, Clock::time_point b) { return std::chrono::duration<double>(b - a).count(); }

// Timings of a ring shift over `runs` runs: the lower quartile (not the best: with
// more ranks than cores a lucky run finds every rank on a core; not the median: right
// after init every other shift still pays a peer's wake-up, which back-to-back
// collectives do not), and the median, which is what a step costs when ranks
// outnumber cores and every step waits for the scheduler.
struct Timing {
    double quartile = 0, median = 0;
};

HcclResult timeShift(Context& ctx, const char* out, char* in, size_t bytes, int runs, Timing* timing) {
    const uint32_t next = (ctx.rank() + 1) % ctx.size(), prev = (ctx.rank() + ctx.size() - 1) % ctx.size();
    std::vector<double> t;
    for (int i = 0; i < runs; ++i) {
        const auto t0 = Clock::now();
        ctx.send(next, out, bytes);
        ctx.recv(prev, in, bytes);
        HOSTCCL_CHECK(ctx.waitAll());
        t.push_back(seconds(t0, Clock::now()));
    }
    std::sort(t.begin(), t.end());
    timing->quartile = t[t.size() / 4];
    timing->median = t[t.size() / 2];
    return HCCL_SUCCESS;
}

// Seconds per byte of `kernel` over a buffer of `bytes`, best of a few runs.
template <typename Kernel>
double timeKernel(size_t bytes, Kernel kernel) {
    double best = 1e9;
    for (int i = 0; i < kKernelRuns; ++i) {
        const auto t0 = Clock::now();
        kernel();
        best = std::min(best, seconds(t0, Clock::now()));
    }
    return best / bytes;
}

// What one rank measured, in integers so that summing over ranks is exact.
struct Sample {
    enum : size_t { kAlpha, kAlphaBusy, kBeta, kCount, kPerClass };
    enum : size_t {
        kGamma = kPerClass * kLinkClasses,
        kCopy,
        kKernelCount,
        kHandshake,
        kHandshakeCount,
        kBoard,
        kBoardCount,
        kSize
    };
    std::vector<int64_t> v = std::vector<int64_t>(kSize, 0);
    static int64_t nanos(double s) { return static_cast<int64_t>(s * 1e9); }
    static int64_t femtos(double s) { return static_cast<int64_t>(s * 1e15); }
};

// `synced`: when the first shift ended, i.e. when this rank's neighbours had finished
// creating the communicator too (what came before was waiting, not probing).
HcclResult measureLinks(const CommView& view, Deadline deadline, CommFailure* failure, Sample* s,
                        Clock::time_point* synced) {
    CollArgs shift;
    shift.type = CollType::Barrier;  // tags only: the probe runs before any user op, at sequence 0
    Context ctx(view, shift, deadline, failure);
    // What is sent is never written: one buffer serves every rank of the process. What
    // is received needs no zeroing (at 1024 thread ranks, first touches of probe buffers
    // were a fifth of creation).
    static const std::vector<char> out(kLargeBytes, 1);
    const std::unique_ptr<char[]> in(new char[kLargeBytes]);
    Timing small, mid, large, ignored;
    // Warm up: the first messages after connecting find peers asleep and pages unmapped.
    HOSTCCL_CHECK(timeShift(ctx, out.data(), in.get(), 8, 1, &ignored));
    *synced = Clock::now();
    HOSTCCL_CHECK(timeShift(ctx, out.data(), in.get(), kLargeBytes, 1, &ignored));
    const Runs runs = runsFor(view);
    HOSTCCL_CHECK(timeShift(ctx, out.data(), in.get(), 8, runs.warmup, &ignored));
    HOSTCCL_CHECK(timeShift(ctx, out.data(), in.get(), 8, runs.small, &small));
    HOSTCCL_CHECK(timeShift(ctx, out.data(), in.get(), kMidBytes, runs.large, &mid));
    HOSTCCL_CHECK(timeShift(ctx, out.data(), in.get(), kLargeBytes, runs.large, &large));
    const uint32_t next = (view.rank + 1) % view.size, prev = (view.rank + view.size - 1) % view.size;
    const LinkClass c = std::max(view.links->existing(next)->linkClass(), view.links->existing(prev)->linkClass());
    const size_t base = size_t(c) * Sample::kPerClass;
    s->v[base + Sample::kAlpha] = Sample::nanos(small.quartile);
    s->v[base + Sample::kAlphaBusy] = Sample::nanos(small.median);
    s->v[base + Sample::kBeta] =
        Sample::femtos(std::max(large.quartile - mid.quartile, 1e-9) / (kLargeBytes - kMidBytes));
    s->v[base + Sample::kCount] = 1;
    return HCCL_SUCCESS;
}

// Where the direct algorithms may run (one host, few enough ranks for a full mesh
// of links): every rank posts a small message to every other and waits for all of
// theirs, as their handshake does.
HcclResult measureHandshake(const CommView& view, Deadline deadline, CommFailure* failure, Sample* s) {
    if (view.nodes != 1 || !view.sharedMemoryMesh) return HCCL_SUCCESS;  // decided the same way on every rank
    CollArgs exchange;
    exchange.type = CollType::Barrier;
    Context ctx(view, exchange, deadline, failure);
    std::vector<char> out(64, 1), in(64 * size_t(view.size));
    std::vector<double> t;
    for (int i = 0; i < kSmallRuns; ++i) {
        const auto t0 = Clock::now();
        for (uint32_t p = 0; p < view.size; ++p) {
            if (p == view.rank) continue;
            ctx.send(p, out.data(), out.size());
            ctx.recv(p, in.data() + 64 * size_t(p), 64);
        }
        HOSTCCL_CHECK(ctx.waitAll());
        t.push_back(seconds(t0, Clock::now()));
    }
    // As for a shift (Timing): with ranks outnumbering cores every handshake waits for
    // the scheduler, so the median is what one costs. The lower quartile there came out
    // 9-29 us from run to run on 4 ranks and 2 cores, and a 64 KiB broadcast took the
    // direct algorithm (1.7 GB/s every run) in some runs and the binomial tree (2-13,
    // median 9) in others.
    const size_t at = view.crowded ? t.size() / 2 : t.size() / 4;
    std::nth_element(t.begin(), t.begin() + at, t.end());
    s->v[Sample::kHandshake] = Sample::nanos(t[at]);
    s->v[Sample::kHandshakeCount] = 1;
    return HCCL_SUCCESS;
}

// Threads of one process: the direct algorithms' exchanges are barriers on the
// communicator's board (direct/process_board.h); timed as they run, back to back.
HcclResult measureBoard(const CommView& view, Deadline deadline, CommFailure* failure, Sample* s) {
    if (view.board == nullptr) return HCCL_SUCCESS;  // decided the same way on every rank
    // Hundreds of crowded threads: each barrier is a round of the scheduler over all
    // of them (about a second of creation at 1024 ranks); the model's estimate stands.
    if (view.crowded && view.size >= kQuickProbeRanks) return HCCL_SUCCESS;
    const ProcessBoard::Waiting how{deadline, failure, true, !view.crowded};
    std::vector<double> t;
    const int runs = 1 + runsFor(view).small;  // the first finds ranks still arriving from the shifts
    for (int i = 0; i < runs; ++i) {
        const auto t0 = Clock::now();
        uint32_t flagged = 0;
        std::string why;
        if (HcclResult rc = view.board->arrive(view.rank, false, how, &flagged, &why); rc != HCCL_SUCCESS)
            return fail(rc, "cost probe, in-process barrier: {}", why);
        if (i > 0) t.push_back(seconds(t0, Clock::now()));
    }
    std::nth_element(t.begin(), t.begin() + t.size() / 4, t.end());
    s->v[Sample::kBoard] = Sample::nanos(t[t.size() / 4]);
    s->v[Sample::kBoardCount] = 1;
    return HCCL_SUCCESS;
}

// The reduction and copy rates are the machine's: measured once per process, by the
// first rank that gets here, and shared by every rank and communicator after it
// (a thousand thread ranks each timing their own buffers measured only each other).
void measureKernels(Sample* s) {
    struct Rates {
        int64_t gamma, copy;
    };
    static const Rates rates = [] {
        const size_t count = kLargeBytes / sizeof(float);
        std::vector<float> a(count, 1.0f), b(count, 2.0f), c(count);
        ReduceFn sum = reduceFunction(HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM);
        return Rates{Sample::femtos(timeKernel(kLargeBytes, [&] { sum(c.data(), a.data(), b.data(), count); })),
                     Sample::femtos(timeKernel(kLargeBytes, [&] { std::memcpy(c.data(), a.data(), kLargeBytes); }))};
    }();
    s->v[Sample::kGamma] = rates.gamma;
    s->v[Sample::kCopy] = rates.copy;
    s->v[Sample::kKernelCount] = 1;
}

HcclResult sumOverRanks(const CommView& view, Deadline deadline, CommFailure* failure, Sample* s) {
    CollArgs sum;
    sum.type = CollType::AllReduce;
    sum.dtype = HCCL_DATA_TYPE_INT64;
    sum.op = HCCL_REDUCE_SUM;
    sum.count = s->v.size();
    sum.sendBuf = s->v.data();
    sum.recvBuf = s->v.data();
    Context ctx(view, sum, deadline, failure);
    return RecursiveDoublingAllReduce().run(ctx);
}

void apply(const Sample& total, CostParams* p) {
    for (size_t c = 0; c < kLinkClasses; ++c) {
        const int64_t* v = &total.v[c * Sample::kPerClass];
        if (v[Sample::kCount] == 0 || std::strcmp(p->linkSource[c], "config") == 0) continue;
        p->link[c] = LinkCost{v[Sample::kAlpha] * 1e-9 / v[Sample::kCount],
                              std::max<int64_t>(v[Sample::kBeta], 1) * 1e-15 / v[Sample::kCount],
                              v[Sample::kAlphaBusy] * 1e-9 / v[Sample::kCount]};
        p->linkSource[c] = "probe";
    }
    if (const int64_t h = total.v[Sample::kHandshakeCount]; h > 0) {
        p->handshake = total.v[Sample::kHandshake] * 1e-9 / h;
        p->handshakeSource = "probe";
    }
    if (const int64_t b = total.v[Sample::kBoardCount]; b > 0) p->boardBarrier = total.v[Sample::kBoard] * 1e-9 / b;
    const int64_t k = total.v[Sample::kKernelCount];
    if (k == 0) return;
    if (std::strcmp(p->gammaSource, "config") != 0) {
        p->gamma = std::max<int64_t>(total.v[Sample::kGamma], 1) * 1e-15 / k;
        p->gammaSource = "probe";
    }
    if (std::strcmp(p->copySource, "config") != 0) {
        p->copyBeta = std::max<int64_t>(total.v[Sample::kCopy], 1) * 1e-15 / k;
        p->copySource = "probe";
    }
}
}  // namespace

HcclResult probeCosts(const CommView& comm, Deadline deadline, CommFailure* failure, CostParams* params) {
    if (comm.size < 2) return HCCL_SUCCESS;
    Clock::time_point start;
    CommView view = comm;
    view.tracer = nullptr;  // the probe is not the user's work
    view.seq = 0;
    Sample s;
    HOSTCCL_CHECK(measureLinks(view, deadline, failure, &s, &start));
    HOSTCCL_CHECK(measureHandshake(view, deadline, failure, &s));
    HOSTCCL_CHECK(measureBoard(view, deadline, failure, &s));
    measureKernels(&s);
    HOSTCCL_CHECK(sumOverRanks(view, deadline, failure, &s));
    apply(s, params);
    params->probeMs = seconds(start, Clock::now()) * 1e3;
    return HCCL_SUCCESS;
}

}  // namespace hostccl
