#include "planner/probe_ranks.h"

#include <cblas.h>
#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "common/cpu_clock.h"
#include "hostccl/hostccl.h"

namespace hostccl::plan {

namespace {
constexpr int kGemmN = 256;
constexpr uint64_t kHostCommId = 0x504c'414e'484f'5354;  // "PLANHOST", plus the host's index
constexpr uint64_t kHandoffFloats = 256;

bool ready(ProbeRank* r, HcclComm comm) {
    r->comm = comm;
    r->a.assign(kGemmN * kGemmN, 0.5f), r->b.assign(kGemmN * kGemmN, 0.25f), r->c.assign(kGemmN * kGemmN, 0.f);
    r->data.assign(kSyncProbeBytes / sizeof(float), 1.f);
    return aclrtCreateStream(&r->stream) == ACL_SUCCESS;
}

double secondsSince(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
}  // namespace

void ProbeRank::gemms(int count) {
    const double began = threadCpuSeconds();
    for (int g = 0; g < count; ++g)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, kGemmN, kGemmN, kGemmN, 1.f, a.data(), kGemmN, b.data(),
                    kGemmN, 0.f, c.data(), kGemmN);
    computeCpu += threadCpuSeconds() - began;
}

void ProbeRank::finish(HcclResult launched) {
    rc = launched;
    if (rc == HCCL_SUCCESS && aclrtSynchronizeStream(stream) != ACL_SUCCESS) rc = HCCL_E_RUNTIME;
}

void ProbeRank::allReduce() {
    if (rc == HCCL_SUCCESS)
        finish(HcclAllReduce(data.data(), data.data(), data.size(), HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream));
}

void ProbeRank::send(uint32_t peer) {
    if (rc == HCCL_SUCCESS) finish(HcclSend(data.data(), kHandoffFloats, HCCL_DATA_TYPE_FP32, peer, comm, stream));
}

void ProbeRank::recv(uint32_t peer) {
    if (rc == HCCL_SUCCESS) finish(HcclRecv(data.data(), kHandoffFloats, HCCL_DATA_TYPE_FP32, peer, comm, stream));
}

bool ProbeHost::open(uint32_t threadRanks, std::string* why) {
    openblas_set_num_threads(1);  // a rank per thread, as the training ranks
    if (threadRanks == 0) return openLaunched(why);
    std::vector<HcclComm> comms(threadRanks);
    std::vector<int32_t> devices(threadRanks);
    for (uint32_t i = 0; i < threadRanks; ++i) devices[i] = int32_t(i);
    const HcclResult rc = HcclCommInitAll(threadRanks, devices.data(), comms.data());
    if (rc != HCCL_SUCCESS)
        return *why = fmt::format("creating {} ranks to probe the host failed: {}", threadRanks, HcclGetErrorString(rc)), false;
    ranks_.assign(threadRanks, ProbeRank{});
    hostRanks_ = threadRanks;
    bool ok = true;
    for (uint32_t i = 0; i < threadRanks; ++i) ok = ready(&ranks_[i], comms[i]) && ok;
    if (!ok) *why = "probing the host: cannot create a stream";
    return ok;
}

// The job's communicator from the launcher's environment, and one of this host's
// ranks (a sub-communicator per host, all made at once).
bool ProbeHost::openLaunched(std::string* why) {
    HcclResult rc = HostcclCommInitFromEnv(&world_);
    uint32_t me = 0, n = 0, host = 0, h = 0;
    std::vector<uint32_t> mine;
    if (rc == HCCL_SUCCESS) rc = HcclGetRankId(world_, &me);
    if (rc == HCCL_SUCCESS) rc = HcclGetRankSize(world_, &n);
    if (rc == HCCL_SUCCESS) rc = HostcclCommGetRankHost(world_, me, &host);
    for (uint32_t r = 0; r < n && rc == HCCL_SUCCESS; ++r) {
        rc = HostcclCommGetRankHost(world_, r, &h);
        if (h == host && rc == HCCL_SUCCESS) {
            if (r == me) index_ = uint32_t(mine.size());
            mine.push_back(r);
        }
    }
    HcclComm sub = nullptr;
    HcclCommConfig config;
    HcclCommConfigInit(&config);
    if (rc == HCCL_SUCCESS)
        rc = HcclCreateSubCommConfig(&world_, uint32_t(mine.size()), mine.data(), kHostCommId + host, index_, &config, &sub);
    if (rc != HCCL_SUCCESS)
        return *why = fmt::format("creating the communicators to probe the hosts failed: {}", HcclGetErrorString(rc)), false;
    first_ = me == 0;
    hostRanks_ = uint32_t(mine.size());
    jobRank_ = me, jobSize_ = n;
    ranks_.assign(1, ProbeRank{});
    if (!ready(&ranks_[0], sub) || !ready(&job_, world_) || aclrtCreateStream(&worldStream_) != ACL_SUCCESS)
        return *why = "probing the host: cannot create a stream", false;
    return true;
}

bool ProbeHost::close(std::string* why) {
    bool ok = why->empty();
    auto failed = [&](HcclResult rc) {
        if (rc != HCCL_SUCCESS && ok) *why = fmt::format("probing the host: an op failed: {}", HcclGetErrorString(rc)), ok = false;
    };
    failed(rc_);
    for (ProbeRank& r : ranks_) {
        failed(r.rc);
        if (r.stream != nullptr) aclrtDestroyStream(r.stream);
        if (r.comm != nullptr) HcclCommDestroy(r.comm);
    }
    ranks_.clear();
    failed(job_.rc);
    if (job_.stream != nullptr) aclrtDestroyStream(job_.stream);  // its communicator is world_
    job_ = ProbeRank{};
    if (worldStream_ != nullptr) aclrtDestroyStream(worldStream_);
    if (world_ != nullptr) HcclCommDestroy(world_);
    world_ = nullptr, worldStream_ = nullptr;
    return ok;
}

bool ProbeHost::worldReduce(double* seconds, HcclReduceOp op) {
    if (rc_ == HCCL_SUCCESS) rc_ = HcclAllReduce(seconds, seconds, 1, HCCL_DATA_TYPE_FP64, op, world_, worldStream_);
    if (rc_ == HCCL_SUCCESS && aclrtSynchronizeStream(worldStream_) != ACL_SUCCESS) rc_ = HCCL_E_RUNTIME;
    return rc_ == HCCL_SUCCESS;
}

// Every process of the job from a barrier; each times its own part.
double ProbeHost::timedOverJob(const std::function<void()>& part) {
    if (rc_ == HCCL_SUCCESS) rc_ = HcclBarrier(world_, worldStream_);
    if (rc_ == HCCL_SUCCESS && aclrtSynchronizeStream(worldStream_) != ACL_SUCCESS) rc_ = HCCL_E_RUNTIME;
    const auto t0 = std::chrono::steady_clock::now();
    if (rc_ == HCCL_SUCCESS) part();
    double t = secondsSince(t0);
    worldReduce(&t, HCCL_REDUCE_MAX);
    return t;
}

double ProbeHost::acrossJob(const std::function<void(ProbeRank&, uint32_t)>& body) {
    if (world_ == nullptr) return together(body);
    return timedOverJob([&] { body(job_, jobRank_); });
}

double ProbeHost::together(const std::function<void(ProbeRank&, uint32_t)>& body) {
    if (world_ != nullptr) return timedOverJob([&] { body(ranks_[0], index_); });
    std::atomic<size_t> waiting{0};
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    for (uint32_t i = 0; i < ranks_.size(); ++i)
        threads.emplace_back([&, i] {
            waiting.fetch_add(1);
            while (!go.load()) std::this_thread::yield();
            body(ranks_[i], i);
        });
    while (waiting.load() < ranks_.size()) std::this_thread::yield();
    const auto began = std::chrono::steady_clock::now();
    go.store(true);
    for (std::thread& t : threads) t.join();
    return secondsSince(began);
}

double ProbeHost::alone(const std::function<void(ProbeRank&)>& body) {
    double t = 0;
    if (first_) {
        const auto t0 = std::chrono::steady_clock::now();
        body(ranks_[0]);
        t = secondsSince(t0);
    }
    if (world_ != nullptr) worldReduce(&t, HCCL_REDUCE_MAX);  // the others wait here
    return t;
}

double ProbeHost::takeComputeCpu() {
    double sum = 0;
    for (ProbeRank& r : ranks_) sum += r.computeCpu, r.computeCpu = 0;
    if (world_ == nullptr) return sum;
    uint32_t jobRanks = 0;
    if (HcclGetRankSize(world_, &jobRanks) != HCCL_SUCCESS || !worldReduce(&sum, HCCL_REDUCE_SUM)) return 0;
    return sum * hostRanks_ / jobRanks;  // the job's sum over its hosts (the same ranks on each)
}

}  // namespace hostccl::plan
