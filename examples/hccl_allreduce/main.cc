// An HCCL host program in the style of the public HCCL examples: one thread per
// device, root info shared in memory, AllReduce on a stream, synchronize, check.
// It uses only hccl/hccl.h and acl/acl.h and builds as C++14, unchanged from
// what runs on Ascend hardware.
#include <cstdio>
#include <thread>
#include <vector>

#include "acl/acl.h"
#include "hccl/hccl.h"

#define ACL_CHECK(call)                                                             \
    do {                                                                            \
        aclError e_ = (call);                                                       \
        if (e_ != ACL_SUCCESS) {                                                    \
            std::printf("%s failed: %d (line %d)\n", #call, e_, __LINE__);          \
            return -1;                                                              \
        }                                                                           \
    } while (0)
#define HCCL_CHECK(call)                                                            \
    do {                                                                            \
        HcclResult r_ = (call);                                                     \
        if (r_ != HCCL_SUCCESS) {                                                   \
            std::printf("%s failed: %s (line %d)\n", #call, HcclGetErrorString(r_), __LINE__); \
            return -1;                                                              \
        }                                                                           \
    } while (0)

struct ThreadContext {
    HcclRootInfo* rootInfo;
    uint32_t devId;
    uint32_t devCount;
};

static int runRank(ThreadContext ctx) {
    ACL_CHECK(aclrtSetDevice(static_cast<int32_t>(ctx.devId)));
    aclrtStream stream;
    ACL_CHECK(aclrtCreateStream(&stream));
    HcclComm comm;
    HCCL_CHECK(HcclCommInitRootInfo(ctx.devCount, ctx.rootInfo, ctx.devId, &comm));

    const uint64_t count = 1024;
    const size_t bytes = count * sizeof(float);
    std::vector<float> host(count, static_cast<float>(ctx.devId + 1));
    void* sendBuf = nullptr;
    void* recvBuf = nullptr;
    ACL_CHECK(aclrtMalloc(&sendBuf, bytes, ACL_MEM_MALLOC_HUGE_ONLY));
    ACL_CHECK(aclrtMalloc(&recvBuf, bytes, ACL_MEM_MALLOC_HUGE_ONLY));
    ACL_CHECK(aclrtMemcpy(sendBuf, bytes, host.data(), bytes, ACL_MEMCPY_HOST_TO_DEVICE));

    HCCL_CHECK(HcclAllReduce(sendBuf, recvBuf, count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream));
    ACL_CHECK(aclrtSynchronizeStream(stream));

    ACL_CHECK(aclrtMemcpy(host.data(), bytes, recvBuf, bytes, ACL_MEMCPY_DEVICE_TO_HOST));
    const float expected = static_cast<float>(ctx.devCount * (ctx.devCount + 1) / 2);
    for (uint64_t i = 0; i < count; ++i) {
        if (host[i] != expected) {
            std::printf("rank %u: element %lu is %f, expected %f\n", ctx.devId, (unsigned long)i, host[i], expected);
            return -1;
        }
    }
    std::printf("rank %u: allreduce of %lu floats ok (every element %.0f)\n", ctx.devId, (unsigned long)count, expected);
    HCCL_CHECK(HcclCommDestroy(comm));
    ACL_CHECK(aclrtFree(sendBuf));
    ACL_CHECK(aclrtFree(recvBuf));
    ACL_CHECK(aclrtDestroyStream(stream));
    ACL_CHECK(aclrtResetDevice(static_cast<int32_t>(ctx.devId)));
    return 0;
}

int main() {
    ACL_CHECK(aclInit(nullptr));
    uint32_t devCount = 0;
    ACL_CHECK(aclrtGetDeviceCount(&devCount));
    if (devCount > 4) devCount = 4;
    ACL_CHECK(aclrtSetDevice(0));
    HcclRootInfo rootInfo;
    HCCL_CHECK(HcclGetRootInfo(&rootInfo));

    std::vector<int> results(devCount, -1);
    std::vector<std::thread> threads;
    for (uint32_t i = 0; i < devCount; ++i) {
        ThreadContext ctx{&rootInfo, i, devCount};
        threads.emplace_back([&results, ctx, i] { results[i] = runRank(ctx); });
    }
    for (auto& t : threads) t.join();
    ACL_CHECK(aclFinalize());
    for (int r : results)
        if (r != 0) return 1;
    std::printf("all %u ranks ok\n", devCount);
    return 0;
}
