// Bad input to the memory, window, profiling and group calls (part of
// bad_input_test): the precise error code, nothing changed (outputs untouched,
// mappings and contents as they were), no crash.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "acl/acl_prof.h"
#include "hostccl/hostccl.h"
#include "tests/support/world.h"

using namespace hostccl::test;

namespace {

World& twoRanks() {
    static World w(2);
    return w;
}

aclrtPhysicalMemProp deviceProp() {
    aclrtPhysicalMemProp p;
    std::memset(&p, 0, sizeof p);
    p.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    p.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    p.memAttr = ACL_HBM_MEM_HUGE;
    p.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    p.location.id = 0;
    return p;
}

constexpr size_t kG = 2u << 20;  // the granularity the runtime reports (checked below)
void* const kUntouched = reinterpret_cast<void*>(0x5a5a);

}  // namespace

TEST(BadInputMemory, GranularityAndProperties) {
    aclrtPhysicalMemProp prop = deviceProp();
    size_t g = 0;
    ASSERT_EQ(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &g), ACL_SUCCESS);
    EXPECT_EQ(g, kG);
    ASSERT_EQ(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED, &g), ACL_SUCCESS);
    EXPECT_EQ(g, kG);
    g = 7;
    EXPECT_EQ(aclrtMemGetAllocationGranularity(nullptr, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &g), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_UNDEF, &g), ACL_ERROR_INVALID_PARAM);
    aclrtPhysicalMemProp bad = prop;
    bad.location.id = 100000;  // no such device
    EXPECT_EQ(aclrtMemGetAllocationGranularity(&bad, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &g), ACL_ERROR_INVALID_PARAM);
    bad = prop;
    std::memset(&bad.allocationType, 0x7f, sizeof bad.allocationType);
    EXPECT_EQ(aclrtMemGetAllocationGranularity(&bad, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &g), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(g, 7u);
}

TEST(BadInputMemory, ReserveAndPhysicalSizes) {
    void* va = kUntouched;
    EXPECT_EQ(aclrtReserveMemAddress(&va, 0, 0, nullptr, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtReserveMemAddress(&va, kG + 4096, 0, nullptr, 0), ACL_ERROR_INVALID_PARAM);  // not a multiple
    EXPECT_EQ(aclrtReserveMemAddress(&va, kG, 3, nullptr, 0), ACL_ERROR_INVALID_PARAM);         // alignment
    EXPECT_EQ(aclrtReserveMemAddress(&va, kG, 0, nullptr, 2), ACL_ERROR_INVALID_PARAM);         // flags
    EXPECT_EQ(aclrtReserveMemAddress(nullptr, kG, 0, nullptr, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(va, kUntouched);
    aclrtPhysicalMemProp prop = deviceProp();
    aclrtDrvMemHandle h = kUntouched;
    EXPECT_EQ(aclrtMallocPhysical(&h, kG / 2, &prop, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMallocPhysical(&h, kG, nullptr, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMallocPhysical(&h, kG, &prop, 1), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(h, kUntouched);
    int notAHandle = 0;
    EXPECT_EQ(aclrtFreePhysical(&notAHandle), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtFreePhysical(nullptr), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtReleaseMemAddress(&notAHandle), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtUnmapMem(&notAHandle), ACL_ERROR_INVALID_PARAM);
}

// Refused maps leave the mapping that is there, with its contents.
TEST(BadInputMemory, MapUnmapAndRelease) {
    aclrtPhysicalMemProp prop = deviceProp();
    void* va = nullptr;
    aclrtDrvMemHandle a = nullptr, b = nullptr;
    ASSERT_EQ(aclrtReserveMemAddress(&va, 4 * kG, 0, nullptr, 1), ACL_SUCCESS);
    ASSERT_EQ(reinterpret_cast<uintptr_t>(va) % kG, 0u);
    ASSERT_EQ(aclrtMallocPhysical(&a, 2 * kG, &prop, 0), ACL_SUCCESS);
    ASSERT_EQ(aclrtMallocPhysical(&b, kG, &prop, 0), ACL_SUCCESS);
    char* base = static_cast<char*>(va);
    ASSERT_EQ(aclrtMapMem(base, 2 * kG, 0, a, 0), ACL_SUCCESS);
    std::memset(base, 0x3c, 2 * kG);

    EXPECT_EQ(aclrtMapMem(base + kG, kG, 0, b, 0), ACL_ERROR_INVALID_PARAM);       // overlaps a's mapping
    EXPECT_EQ(aclrtMapMem(base + 2 * kG, kG, kG, b, 0), ACL_ERROR_INVALID_PARAM);  // offset + size beyond b
    EXPECT_EQ(aclrtMapMem(base + 2 * kG + 4096, kG, 0, b, 0), ACL_ERROR_INVALID_PARAM);  // unaligned address
    EXPECT_EQ(aclrtMapMem(base + 2 * kG, kG / 2, 0, b, 0), ACL_ERROR_INVALID_PARAM);     // size not a multiple
    EXPECT_EQ(aclrtMapMem(base + 3 * kG, 2 * kG, 0, a, 0), ACL_ERROR_INVALID_PARAM);     // runs past the reservation
    int notAHandle = 0;
    EXPECT_EQ(aclrtMapMem(base + 2 * kG, kG, 0, &notAHandle, 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclrtMapMem(base + 2 * kG, kG, 0, b, 5), ACL_ERROR_INVALID_PARAM);          // flags
    int onStack = 0;
    EXPECT_EQ(aclrtMapMem(&onStack, kG, 0, b, 0), ACL_ERROR_INVALID_PARAM);              // no reservation there
    for (size_t i = 0; i < 2 * kG; i += 4096) ASSERT_EQ(base[i], 0x3c) << "at " << i;

    EXPECT_EQ(aclrtUnmapMem(base + kG), ACL_ERROR_INVALID_PARAM);         // not where the mapping begins
    EXPECT_EQ(aclrtReleaseMemAddress(va), ACL_ERROR_INVALID_PARAM);       // still mapped
    EXPECT_EQ(aclrtReleaseMemAddress(base + kG), ACL_ERROR_INVALID_PARAM);  // not the reservation's start
    EXPECT_EQ(base[kG + 5], 0x3c);

    ASSERT_EQ(aclrtMapMem(base + 2 * kG, kG, 0, b, 0), ACL_SUCCESS);  // the right way still works
    ASSERT_EQ(aclrtUnmapMem(base + 2 * kG), ACL_SUCCESS);
    EXPECT_EQ(aclrtUnmapMem(base + 2 * kG), ACL_ERROR_INVALID_PARAM);  // twice
    ASSERT_EQ(aclrtFreePhysical(b), ACL_SUCCESS);
    EXPECT_EQ(aclrtFreePhysical(b), ACL_ERROR_INVALID_PARAM);  // twice
    // Freed while mapped: the pages stay until unmapped.
    ASSERT_EQ(aclrtFreePhysical(a), ACL_SUCCESS);
    EXPECT_EQ(base[3], 0x3c);
    ASSERT_EQ(aclrtUnmapMem(base), ACL_SUCCESS);
    ASSERT_EQ(aclrtReleaseMemAddress(va), ACL_SUCCESS);
    EXPECT_EQ(aclrtReleaseMemAddress(va), ACL_ERROR_INVALID_PARAM);
}

TEST(BadInputMemory, CommunicatorRanges) {
    HcclComm comm = twoRanks().comm(0);
    aclrtPhysicalMemProp prop = deviceProp();
    void* va = nullptr;
    aclrtDrvMemHandle h = nullptr, other = nullptr;
    ASSERT_EQ(aclrtReserveMemAddress(&va, 2 * kG, 0, nullptr, 0), ACL_SUCCESS);
    ASSERT_EQ(aclrtMallocPhysical(&h, kG, &prop, 0), ACL_SUCCESS);
    ASSERT_EQ(aclrtMallocPhysical(&other, kG, &prop, 0), ACL_SUCCESS);
    char* base = static_cast<char*>(va);
    std::vector<char> heap(kG);

    EXPECT_EQ(HcclCommSetMemoryRange(nullptr, va, 2 * kG, 0, 0), HCCL_E_PTR);
    EXPECT_EQ(HcclCommSetMemoryRange(comm, nullptr, 2 * kG, 0, 0), HCCL_E_PTR);
    EXPECT_EQ(HcclCommSetMemoryRange(comm, heap.data(), kG, 0, 0), HCCL_E_PARA);  // not reserved memory
    EXPECT_EQ(HcclCommSetMemoryRange(comm, va, 2 * kG, 64, 0), HCCL_E_PARA);      // alignment
    EXPECT_EQ(HcclCommSetMemoryRange(comm, va, 2 * kG, 0, 1), HCCL_E_PARA);       // flags
    EXPECT_EQ(HcclCommSetMemoryRange(comm, va, 3 * kG, 0, 0), HCCL_E_PARA);       // past the reservation
    EXPECT_EQ(HcclCommUnsetMemoryRange(comm, va), HCCL_E_PARA);                   // nothing set yet
    ASSERT_EQ(HcclCommSetMemoryRange(comm, va, 2 * kG, 0, 0), HCCL_SUCCESS);
    EXPECT_EQ(HcclCommSetMemoryRange(comm, base + kG, kG, 0, 0), HCCL_E_PARA);    // overlapping

    EXPECT_EQ(HcclCommActivateCommMemory(comm, base, kG, 0, h, 0), HCCL_E_PARA);  // not mapped yet
    ASSERT_EQ(aclrtMapMem(base, kG, 0, h, 0), ACL_SUCCESS);
    EXPECT_EQ(HcclCommActivateCommMemory(comm, base, kG, 0, other, 0), HCCL_E_PARA);  // another handle's memory
    EXPECT_EQ(HcclCommActivateCommMemory(comm, base, kG, 0, h, 1), HCCL_E_PARA);      // flags
    EXPECT_EQ(HcclCommActivateCommMemory(comm, heap.data(), kG, 0, h, 0), HCCL_E_PARA);  // outside the range
    EXPECT_EQ(HcclCommActivateCommMemory(comm, base, 0, 0, h, 0), HCCL_E_PARA);
    EXPECT_EQ(HcclCommActivateCommMemory(comm, base, kG, 0, nullptr, 0), HCCL_E_PTR);
    ASSERT_EQ(HcclCommActivateCommMemory(comm, base, kG, 0, h, 0), HCCL_SUCCESS);
    EXPECT_EQ(HcclCommActivateCommMemory(comm, base, kG, 0, h, 0), HCCL_E_PARA);  // twice
    EXPECT_EQ(HcclCommUnsetMemoryRange(comm, va), HCCL_E_PARA);                   // still activated
    EXPECT_EQ(HcclCommDeactivateCommMemory(comm, base + 4096), HCCL_E_PARA);
    ASSERT_EQ(HcclCommDeactivateCommMemory(comm, base), HCCL_SUCCESS);
    EXPECT_EQ(HcclCommDeactivateCommMemory(comm, base), HCCL_E_PARA);  // twice
    ASSERT_EQ(HcclCommUnsetMemoryRange(comm, va), HCCL_SUCCESS);
    EXPECT_EQ(HcclCommUnsetMemoryRange(comm, va), HCCL_E_PARA);  // twice

    ASSERT_EQ(aclrtUnmapMem(base), ACL_SUCCESS);
    ASSERT_EQ(aclrtFreePhysical(h), ACL_SUCCESS);
    ASSERT_EQ(aclrtFreePhysical(other), ACL_SUCCESS);
    ASSERT_EQ(aclrtReleaseMemAddress(va), ACL_SUCCESS);
}

TEST(BadInputMemory, SymmetricWindows) {
    World& w = twoRanks();
    std::vector<std::vector<int32_t>> mem(2, std::vector<int32_t>(4096, 1));
    HcclCommSymWindow win = kUntouched;
    EXPECT_EQ(HcclCommSymWinRegister(w.comm(0), nullptr, 64, &win, 1), HCCL_E_PTR);
    EXPECT_EQ(HcclCommSymWinRegister(w.comm(0), mem[0].data(), 64, nullptr, 1), HCCL_E_PTR);
    EXPECT_EQ(HcclCommSymWinRegister(w.comm(0), mem[0].data(), 64, &win, 0), HCCL_E_PARA);  // flag
    EXPECT_EQ(HcclCommSymWinRegister(w.comm(0), mem[0].data(), 0, &win, 1), HCCL_E_PARA);
    EXPECT_EQ(win, kUntouched);
    EXPECT_EQ(HcclCommSymWinDeregister(nullptr), HCCL_E_PTR);
    EXPECT_EQ(HcclCommSymWinDeregister(kUntouched), HCCL_E_PARA);
    size_t offset = 77;
    EXPECT_EQ(HcclCommSymWinGet(w.comm(0), mem[0].data(), 64, &win, &offset), HCCL_E_NOT_FOUND);
    EXPECT_EQ(offset, 77u);

    // Windows of different sizes: refused on both ranks, nothing registered.
    std::vector<HcclCommSymWindow> wins(2, kUntouched);
    auto rcs = w.run([&](uint32_t r) {
        return HcclCommSymWinRegister(w.comm(r), mem[r].data(), r == 0 ? 4096 : 8192, &wins[r], 1);
    });
    EXPECT_EQ(rcs, std::vector<int>(2, HCCL_E_PARA));
    EXPECT_EQ(wins, std::vector<HcclCommSymWindow>(2, kUntouched));
    EXPECT_EQ(HcclCommSymWinGet(w.comm(0), mem[0].data(), 64, &win, &offset), HCCL_E_NOT_FOUND);

    // Registered once, deregistered once; an overlapping second window is refused.
    rcs = w.run([&](uint32_t r) { return HcclCommSymWinRegister(w.comm(r), mem[r].data(), 8192, &wins[r], 1); });
    ASSERT_EQ(rcs, std::vector<int>(2, HCCL_SUCCESS));
    HcclCommSymWindow second = kUntouched;
    EXPECT_EQ(HcclCommSymWinRegister(w.comm(0), mem[0].data() + 16, 64, &second, 1), HCCL_E_PARA);
    EXPECT_EQ(second, kUntouched);
    ASSERT_EQ(HcclCommSymWinGet(w.comm(1), mem[1].data() + 10, 40, &win, &offset), HCCL_SUCCESS);
    EXPECT_EQ(win, wins[1]);
    EXPECT_EQ(offset, 40u);
    EXPECT_EQ(HcclCommSymWinGet(w.comm(1), mem[1].data() + 2040, 64, &win, &offset), HCCL_E_NOT_FOUND);  // runs out
    for (uint32_t r = 0; r < 2; ++r) {
        EXPECT_EQ(HcclCommSymWinDeregister(wins[r]), HCCL_SUCCESS);
        EXPECT_EQ(HcclCommSymWinDeregister(wins[r]), HCCL_E_PARA);
    }
}

TEST(BadInputMemory, Profiling) {
    EXPECT_EQ(aclprofFinalize(), ACL_ERROR_INVALID_PARAM);  // no aclprofInit
    EXPECT_EQ(aclprofInit(nullptr, 4), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclprofInit("/tmp", 0), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclprofInit("/tmp", 9), ACL_ERROR_INVALID_PARAM);  // not the path's length
    EXPECT_EQ(aclprofInit("/proc/version/x", 15), ACL_ERROR_INVALID_PARAM);  // cannot be a directory
    uint32_t devices[2] = {0, 100000};
    EXPECT_EQ(aclprofCreateConfig(devices, 2, ACL_AICORE_NONE, nullptr, 0), nullptr);  // no device 100000
    EXPECT_EQ(aclprofCreateConfig(nullptr, 1, ACL_AICORE_NONE, nullptr, 0), nullptr);
    int events = 0;
    EXPECT_EQ(aclprofCreateConfig(devices, 1, ACL_AICORE_NONE, reinterpret_cast<aclprofAicoreEvents*>(&events), 0),
              nullptr);
    EXPECT_EQ(aclprofCreateConfig(devices, 1, static_cast<aclprofAicoreMetrics>(42), nullptr, 0), nullptr);
    aclprofConfig* config = aclprofCreateConfig(devices, 1, ACL_AICORE_NONE, nullptr, ACL_PROF_HCCL_TRACE);
    ASSERT_NE(config, nullptr);
    EXPECT_EQ(aclprofStart(config), ACL_ERROR_INVALID_PARAM);  // no aclprofInit yet
    EXPECT_EQ(aclprofStop(config), ACL_ERROR_INVALID_PARAM);   // nothing running
    EXPECT_EQ(aclprofStart(reinterpret_cast<aclprofConfig*>(&events)), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclprofDestroyConfig(reinterpret_cast<aclprofConfig*>(&events)), ACL_ERROR_INVALID_PARAM);
    EXPECT_EQ(aclprofDestroyConfig(config), ACL_SUCCESS);
    EXPECT_EQ(aclprofDestroyConfig(config), ACL_ERROR_INVALID_PARAM);
}

TEST(BadInputMemory, Groups) {
    World& w = twoRanks();
    EXPECT_EQ(HcclGroupEnd(), HCCL_E_PARA);
    EXPECT_EQ(HcclGroupStatusGet(nullptr), HCCL_E_PTR);
    // Inside a group a bad call fails at once and is not launched; the good ones run.
    std::vector<std::vector<int32_t>> v(2, std::vector<int32_t>(8, 3));
    auto rcs = w.run([&](uint32_t r) {
        if (HcclGroupStart() != HCCL_SUCCESS) return -1;
        int32_t x = 0;
        if (HcclSend(&x, 1, HCCL_DATA_TYPE_INT32, 7, w.comm(r), w.stream(r)) != HCCL_E_PARA) return -2;  // no rank 7
        if (HcclAllReduce(v[r].data(), v[r].data(), 8, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, w.comm(r), w.stream(r)))
            return -3;
        if (HcclGroupEnd() != HCCL_SUCCESS) return -4;
        return int(aclrtSynchronizeStream(w.stream(r)));
    });
    EXPECT_EQ(rcs, std::vector<int>(2, 0));
    EXPECT_EQ(v, std::vector<std::vector<int32_t>>(2, std::vector<int32_t>(8, 6)));
    bool open = true;
    EXPECT_EQ(HcclGroupStatusGet(&open), HCCL_SUCCESS);
    EXPECT_FALSE(open);
}

TEST(BadInputMemory, NotSupportedOnAHost) {
    HcclComm comm = twoRanks().comm(0);
    EXPECT_EQ(HcclCommSuspend(comm), HCCL_E_NOT_SUPPORT);
    EXPECT_EQ(HcclCommResume(comm), HCCL_E_NOT_SUPPORT);
    EXPECT_EQ(HcclCommRegCommStateCallback("HCCL", nullptr, nullptr), HCCL_E_NOT_SUPPORT);
    uint32_t ranks[1] = {1};
    bool backup[1] = {true};
    EXPECT_EQ(HcclCommWorkingDevNicSet(comm, ranks, backup, 1), HCCL_E_NOT_SUPPORT);
    HcclOpExpansionMode mode = HCCL_OP_EXPANSION_MODE_INVALID;
    EXPECT_EQ(HcclConfigGetInfo(comm, HCCL_CONFIG_TYPE_OP_EXPANSION_MODE, 1, &mode), HCCL_E_PARA);
    EXPECT_EQ(HcclConfigGetInfo(comm, HCCL_CONFIG_TYPE_INVALID, sizeof mode, &mode), HCCL_E_PARA);
    EXPECT_EQ(mode, HCCL_OP_EXPANSION_MODE_INVALID);
    ASSERT_EQ(HcclConfigGetInfo(comm, HCCL_CONFIG_TYPE_OP_EXPANSION_MODE, sizeof mode, &mode), HCCL_SUCCESS);
    EXPECT_EQ(mode, HCCL_OP_EXPANSION_MODE_HOST);
    char name[COMM_NAME_MAX_LENGTH] = {};
    ASSERT_EQ(HcclGetCommName(comm, name), HCCL_SUCCESS);
    HcclCommStatus status = HCCL_COMM_STATUS_RESERVED;
    EXPECT_EQ(HcclCommGetStatus("no such communicator", &status), HCCL_E_NOT_FOUND);
    EXPECT_EQ(status, HCCL_COMM_STATUS_RESERVED);
    ASSERT_EQ(HcclCommGetStatus(name, &status), HCCL_SUCCESS);
    EXPECT_EQ(status, HCCL_COMM_STATUS_READY);
}

// HCCL's expansion-mode and retry settings are validated like every other: a bad
// value fails init on every rank with HCCL_E_PARA; HCCL Test's own values pass.
TEST(BadInputMemory, ExpansionAndRetrySettings) {
    setenv("HCCL_OP_EXPANSION_MODE", "GPU", 1);
    EXPECT_EQ(World(2).initResult(), HCCL_E_PARA);
    setenv("HCCL_OP_EXPANSION_MODE", "AIV", 1);
    for (const char* bad : {"L0:2", "L3:0", "L0:0,L0:1", "L0:0,", "yes"}) {
        setenv("HCCL_OP_RETRY_ENABLE", bad, 1);
        EXPECT_EQ(World(2).initResult(), HCCL_E_PARA) << bad;
    }
    setenv("HCCL_OP_RETRY_ENABLE", "L0:0, L1:0, L2:0", 1);
    EXPECT_EQ(World(2).initResult(), HCCL_SUCCESS);
    unsetenv("HCCL_OP_RETRY_ENABLE");
    unsetenv("HCCL_OP_EXPANSION_MODE");
}
