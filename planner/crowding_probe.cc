#include "planner/crowding_probe.h"

#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "hccl/hccl.h"
#include "hostccl/hostccl.h"

namespace hostccl::plan {

namespace {
constexpr int kRounds = 7, kIters = 40, kGemmN = 256, kGemmsPerSegment = 3;  // about 1 ms a segment

struct Rank {
    HcclComm comm = nullptr;
    aclrtStream stream = nullptr;
    std::vector<float> a, b, c, data;
    HcclResult rc = HCCL_SUCCESS;

    void segment() {
        for (int g = 0; g < kGemmsPerSegment; ++g)
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, kGemmN, kGemmN, kGemmN, 1.f, a.data(), kGemmN, b.data(),
                        kGemmN, 0.f, c.data(), kGemmN);
    }
    void sync() {
        if (rc != HCCL_SUCCESS) return;
        rc = HcclAllReduce(data.data(), data.data(), data.size(), HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream);
        if (rc == HCCL_SUCCESS && aclrtSynchronizeStream(stream) != ACL_SUCCESS) rc = HCCL_E_RUNTIME;
    }
};

// Wall seconds for every rank to run kIters rounds, each a segment and (`withSync`) an
// allreduce, from a common start.
double timeRounds(std::vector<Rank>& ranks, bool withSync) {
    std::atomic<uint32_t> ready{0};
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    for (Rank& r : ranks)
        threads.emplace_back([&, rp = &r] {
            ready.fetch_add(1);
            while (!go.load()) std::this_thread::yield();
            for (int i = 0; i < kIters; ++i) {
                rp->segment();
                if (withSync) rp->sync();
            }
        });
    while (ready.load() < ranks.size()) std::this_thread::yield();
    const auto began = std::chrono::steady_clock::now();
    go.store(true);
    for (std::thread& t : threads) t.join();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
}
}  // namespace

bool measureHostSharing(uint32_t count, double cores, HostSharing* out, std::string* why) {
    openblas_set_num_threads(1);
    std::vector<Rank> ranks(count);
    std::vector<HcclComm> comms(count);
    std::vector<int32_t> devices(count);
    for (uint32_t i = 0; i < count; ++i) devices[i] = int32_t(i);
    HcclResult rc = HcclCommInitAll(count, devices.data(), comms.data());
    if (rc != HCCL_SUCCESS) return *why = fmt::format("creating {} ranks to time a sync failed: {}", count, HcclGetErrorString(rc)), false;
    bool ok = true;
    for (uint32_t i = 0; i < count; ++i) {
        Rank& r = ranks[i];
        r.comm = comms[i];
        ok = ok && aclrtCreateStream(&r.stream) == ACL_SUCCESS;
        r.a.assign(kGemmN * kGemmN, 0.5f), r.b.assign(kGemmN * kGemmN, 0.25f), r.c.assign(kGemmN * kGemmN, 0.f);
        r.data.assign(kSyncProbeBytes / sizeof(float), 1.f);
    }
    std::vector<double> extra;
    double alone = 1e9, together = 1e9;
    if (ok) {
        timeRounds(ranks, true);  // warm: links, pages, caches
        std::vector<Rank> one(1);
        one[0] = ranks[0];  // its buffers; it never syncs alone
        for (int round = 0; round < kRounds; ++round) {
            const double t = timeRounds(ranks, false);
            alone = std::min(alone, timeRounds(one, false));
            together = std::min(together, t);
            extra.push_back((timeRounds(ranks, true) - t) / kIters);
        }
    }
    // The sync cost: the mean over every round (where the scheduler puts the ranks
    // varies from round to round, and a median of rounds still moved 4x between
    // probes). The slowdown: the best rounds' ratio (other load only adds to either);
    // all ranks at one rank's pace would take count / cores times as long as one.
    double sum = 0;
    for (double e : extra) sum += e;
    out->perSync = extra.empty() ? 0.0 : std::max(0.0, sum / double(extra.size()));
    out->computeSlowdown = ok ? std::max(1.0, together / (alone * std::max(1.0, count / cores))) : 1.0;
    for (Rank& r : ranks) {
        if (r.rc != HCCL_SUCCESS && ok) *why = fmt::format("timing a sync: allreduce failed: {}", HcclGetErrorString(r.rc)), ok = false;
        if (r.stream != nullptr) aclrtDestroyStream(r.stream);
        HcclCommDestroy(r.comm);
    }
    if (!ok && why->empty()) *why = "timing a sync: cannot create a stream";
    return ok;
}

}  // namespace hostccl::plan
