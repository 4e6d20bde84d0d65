// Zero-copy RDMA sends on real verbs (run inside the soft-RoCE guest by
// tests/rdma/guest_suite.sh, with HOSTCCL_TRANSPORT=rdma): sends from aclrtMalloc
// memory are written from the buffer through the device's registration cache, which
// registers a buffer once and forgets it when aclrtFree releases it. If it did not,
// the NIC would keep sending the old (still pinned) pages of a freed buffer whose
// address came back from the next aclrtMalloc: the sums below would be wrong.
// Built everywhere, meaningful only where a verbs device exists: elsewhere it skips,
// saying why.
#include <gtest/gtest.h>

#include <cstdlib>
#include <iostream>
#include <set>
#include <cstring>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "hccl/hccl.h"
#include "tests/support/world.h"
#include "transports/rdma/verbs/verbs_device.h"

using hostccl::test::World;
using hostccl::transport::rdma::VerbsDevice;

namespace {

constexpr uint64_t kCount = 256 * 1024;  // 1 MiB of floats: chunks above the zero-copy threshold

// The process-wide device the links use; null (and the test skipped) without one.
std::shared_ptr<VerbsDevice> device() {
    std::string why;
    auto d = VerbsDevice::get("127.0.0.1", &why);
    if (d == nullptr) std::cout << "no usable RDMA device: " << why << "\n";
    return d;
}

struct DeviceBuffers {
    float* send = nullptr;
    float* recv = nullptr;
    DeviceBuffers() {
        EXPECT_EQ(aclrtMalloc(reinterpret_cast<void**>(&send), kCount * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST), 0);
        EXPECT_EQ(aclrtMalloc(reinterpret_cast<void**>(&recv), kCount * sizeof(float), ACL_MEM_MALLOC_HUGE_FIRST), 0);
    }
    ~DeviceBuffers() {
        aclrtFree(send);
        aclrtFree(recv);
    }
};

// Rank r contributes (r + 1) * salt + i % 7 at index i; returns the mismatches.
int allReduceAndCheck(const World& world, uint32_t r, float* send, float* recv, float salt) {
    for (uint64_t i = 0; i < kCount; ++i) send[i] = float(r + 1) * salt + float(i % 7);
    if (HcclAllReduce(send, recv, kCount, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, world.comm(r), world.stream(r)) !=
            HCCL_SUCCESS ||
        aclrtSynchronizeStream(world.stream(r)) != ACL_SUCCESS)
        return -1;
    const float ranks = float(world.size());
    const float saltSum = salt * ranks * (ranks + 1) / 2;
    int bad = 0;
    for (uint64_t i = 0; i < kCount; ++i) bad += recv[i] != saltSum + ranks * float(i % 7);
    return bad;
}

}  // namespace

TEST(RdmaZeroCopy, RegistersOnceAndForgetsFreedBuffers) {
    setenv("HOSTCCL_TRANSPORT", "rdma", 1);
    auto dev = device();
    if (dev == nullptr) GTEST_SKIP() << "no RDMA device (runs in the soft-RoCE guest: tests/rdma/run.sh)";
    World world(2);
    ASSERT_TRUE(world.ok()) << "init over RDMA failed: " << world.initResult();

    // First op registers each rank's buffers; the second finds them in the cache.
    std::vector<DeviceBuffers*> buffers(2);
    for (auto& b : buffers) b = new DeviceBuffers;
    const uint64_t before = dev->registrationMisses();
    for (int bad : world.run([&](uint32_t r) { return allReduceAndCheck(world, r, buffers[r]->send, buffers[r]->recv, 1); }))
        EXPECT_EQ(bad, 0);
    const uint64_t registered = dev->registrationMisses() - before;
    EXPECT_GE(registered, 2u) << "the sends did not go zero-copy from aclrtMalloc memory";
    for (int bad : world.run([&](uint32_t r) { return allReduceAndCheck(world, r, buffers[r]->send, buffers[r]->recv, 2); }))
        EXPECT_EQ(bad, 0);
    EXPECT_EQ(dev->registrationMisses() - before, registered) << "a reused buffer was registered again";

    // Free and allocate again: the kernel hands the same addresses back as new pages,
    // which is the case a stale registration would get wrong.
    std::set<float*> old;
    for (auto*& b : buffers) {
        old.insert({b->send, b->recv});
        delete b;
        b = new DeviceBuffers;
    }
    size_t reused = 0;
    for (auto* b : buffers) reused += old.count(b->send) + old.count(b->recv);
    std::cout << reused << " of 4 buffers came back at a freed address\n";
    EXPECT_GT(reused, 0u) << "no address was reused: the stale-registration case was not exercised";
    for (int bad : world.run([&](uint32_t r) { return allReduceAndCheck(world, r, buffers[r]->send, buffers[r]->recv, 3); }))
        EXPECT_EQ(bad, 0);
    EXPECT_GT(dev->registrationMisses() - before, registered) << "freed buffers were not registered anew";

    // Ordinary heap memory goes through staging, with the same results.
    const uint64_t heapBefore = dev->registrationMisses();
    std::vector<std::vector<float>> send(2, std::vector<float>(kCount)), recv(2, std::vector<float>(kCount));
    for (int bad : world.run([&](uint32_t r) { return allReduceAndCheck(world, r, send[r].data(), recv[r].data(), 4); }))
        EXPECT_EQ(bad, 0);
    EXPECT_EQ(dev->registrationMisses(), heapBefore);
    for (auto* b : buffers) delete b;
}
