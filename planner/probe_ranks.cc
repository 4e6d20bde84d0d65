#include "planner/probe_ranks.h"

#include <cblas.h>
#include <fmt/format.h>

#include <atomic>
#include <chrono>
#include <thread>

namespace hostccl::plan {

namespace {
constexpr int kGemmN = 256;
}

void ProbeRank::gemms(int count) {
    for (int g = 0; g < count; ++g)
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, kGemmN, kGemmN, kGemmN, 1.f, a.data(), kGemmN, b.data(),
                    kGemmN, 0.f, c.data(), kGemmN);
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
    if (rc == HCCL_SUCCESS) finish(HcclSend(data.data(), data.size(), HCCL_DATA_TYPE_FP32, peer, comm, stream));
}

void ProbeRank::recv(uint32_t peer) {
    if (rc == HCCL_SUCCESS) finish(HcclRecv(data.data(), data.size(), HCCL_DATA_TYPE_FP32, peer, comm, stream));
}

bool openProbeRanks(uint32_t count, std::vector<ProbeRank>* ranks, std::string* why) {
    openblas_set_num_threads(1);  // a rank per thread, as the training ranks
    std::vector<HcclComm> comms(count);
    std::vector<int32_t> devices(count);
    for (uint32_t i = 0; i < count; ++i) devices[i] = int32_t(i);
    const HcclResult rc = HcclCommInitAll(count, devices.data(), comms.data());
    if (rc != HCCL_SUCCESS)
        return *why = fmt::format("creating {} ranks to probe the host failed: {}", count, HcclGetErrorString(rc)), false;
    ranks->assign(count, ProbeRank{});
    bool ok = true;
    for (uint32_t i = 0; i < count; ++i) {
        ProbeRank& r = (*ranks)[i];
        r.comm = comms[i];
        ok = ok && aclrtCreateStream(&r.stream) == ACL_SUCCESS;
        r.a.assign(kGemmN * kGemmN, 0.5f), r.b.assign(kGemmN * kGemmN, 0.25f), r.c.assign(kGemmN * kGemmN, 0.f);
        r.data.assign(kSyncProbeBytes / sizeof(float), 1.f);
    }
    if (!ok) *why = "probing the host: cannot create a stream";
    return ok;
}

bool closeProbeRanks(std::vector<ProbeRank>* ranks, std::string* why) {
    bool ok = why->empty();
    for (ProbeRank& r : *ranks) {
        if (r.rc != HCCL_SUCCESS && ok) *why = fmt::format("probing the host: an op failed: {}", HcclGetErrorString(r.rc)), ok = false;
        if (r.stream != nullptr) aclrtDestroyStream(r.stream);
        HcclCommDestroy(r.comm);
    }
    ranks->clear();
    return ok;
}

double timeTogether(size_t ranks, const std::function<void(size_t)>& body) {
    std::atomic<size_t> ready{0};
    std::atomic<bool> go{false};
    std::vector<std::thread> threads;
    for (size_t i = 0; i < ranks; ++i)
        threads.emplace_back([&, i] {
            ready.fetch_add(1);
            while (!go.load()) std::this_thread::yield();
            body(i);
        });
    while (ready.load() < ranks) std::this_thread::yield();
    const auto began = std::chrono::steady_clock::now();
    go.store(true);
    for (std::thread& t : threads) t.join();
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
}

}  // namespace hostccl::plan
