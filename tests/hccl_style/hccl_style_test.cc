// An HCCL-Test-style program (C++11, started by mpirun, root info broadcast over
// MPI) for the parts of the HCCL/ACL host API that HCCL Test's -z, -m and profiling
// modes use, plus groups. One family per run: `hccl_style_test <family>`, where
// family is vmm, range, symwin, prof or group. Every value is checked; the exit
// status is non-zero when any is wrong or any call fails.
#include <dirent.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <string>
#include <vector>

#include "acl/acl.h"
#include "acl/acl_prof.h"
#include "hccl/hccl.h"

namespace {

int gRank = 0, gSize = 1;
HcclComm gComm = nullptr;
aclrtStream gStream = nullptr;

#define EXPECT_OK(call)                                                                      \
    do {                                                                                     \
        long rc_ = static_cast<long>(call);                                                  \
        if (rc_ != 0) {                                                                      \
            printf("rank %d: %s:%d: %s returned %ld\n", gRank, __FILE__, __LINE__, #call, rc_); \
            return 1;                                                                        \
        }                                                                                    \
    } while (0)

#define EXPECT_FAILS(call)                                                                   \
    do {                                                                                     \
        if (static_cast<long>(call) == 0) {                                                  \
            printf("rank %d: %s:%d: %s succeeded but must fail\n", gRank, __FILE__, __LINE__, #call); \
            return 1;                                                                        \
        }                                                                                    \
    } while (0)

// Values whose sums are exact: rank r's element i is r + 1 + i % 7.
int32_t valueOf(int rank, uint64_t i) { return rank + 1 + static_cast<int32_t>(i % 7); }

int sumOf(uint64_t i) {
    int s = 0;
    for (int r = 0; r < gSize; ++r) s += valueOf(r, i);
    return s;
}

void fill(int32_t* p, uint64_t n, int rank) {
    for (uint64_t i = 0; i < n; ++i) p[i] = valueOf(rank, i);
}

int wrong(const char* what, uint64_t i, long got, long want) {
    printf("rank %d: %s element %llu is %ld, expected %ld\n", gRank, what, static_cast<unsigned long long>(i), got, want);
    return 1;
}

// Allreduce (sum) of `n` int32 from send into recv; 0 when every value is right.
int checkAllReduce(int32_t* send, int32_t* recv, uint64_t n) {
    fill(send, n, gRank);
    EXPECT_OK(HcclAllReduce(send, recv, n, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, gComm, gStream));
    EXPECT_OK(aclrtSynchronizeStream(gStream));
    for (uint64_t i = 0; i < n; ++i)
        if (recv[i] != sumOf(i)) return wrong("allreduce", i, recv[i], sumOf(i));
    return 0;
}

// Allgather of `n` int32 per rank.
int checkAllGather(int32_t* send, int32_t* recv, uint64_t n) {
    fill(send, n, gRank);
    EXPECT_OK(HcclAllGather(send, recv, n, HCCL_DATA_TYPE_INT32, gComm, gStream));
    EXPECT_OK(aclrtSynchronizeStream(gStream));
    for (int r = 0; r < gSize; ++r)
        for (uint64_t i = 0; i < n; ++i)
            if (recv[r * n + i] != valueOf(r, i)) return wrong("allgather", r * n + i, recv[r * n + i], valueOf(r, i));
    return 0;
}

// Reduce-scatter (sum): `n` int32 per rank out of n * size in.
int checkReduceScatter(int32_t* send, int32_t* recv, uint64_t n) {
    fill(send, n * gSize, gRank);
    EXPECT_OK(HcclReduceScatter(send, recv, n, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, gComm, gStream));
    EXPECT_OK(aclrtSynchronizeStream(gStream));
    for (uint64_t i = 0; i < n; ++i) {
        const uint64_t at = gRank * n + i;
        if (recv[i] != sumOf(at)) return wrong("reducescatter", i, recv[i], sumOf(at));
    }
    return 0;
}

// Broadcast of `n` int32 from the last rank.
int checkBroadcast(int32_t* buf, uint64_t n) {
    const int root = gSize - 1;
    if (gRank == root) fill(buf, n, root); else memset(buf, 0, n * 4);
    EXPECT_OK(HcclBroadcast(buf, n, HCCL_DATA_TYPE_INT32, root, gComm, gStream));
    EXPECT_OK(aclrtSynchronizeStream(gStream));
    for (uint64_t i = 0; i < n; ++i)
        if (buf[i] != valueOf(root, i)) return wrong("broadcast", i, buf[i], valueOf(root, i));
    return 0;
}

aclrtPhysicalMemProp deviceProp() {
    aclrtPhysicalMemProp prop;
    memset(&prop, 0, sizeof prop);
    prop.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    prop.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    prop.memAttr = ACL_HBM_MEM_HUGE;
    prop.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    int32_t dev = 0;
    aclrtGetDevice(&dev);
    prop.location.id = static_cast<uint32_t>(dev);
    return prop;
}

size_t granularity() {
    aclrtPhysicalMemProp prop = deviceProp();
    size_t g = 0;
    aclrtMemGetAllocationGranularity(&prop, ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM, &g);
    return g;
}

// vmm: collectives on memory reserved, created and mapped through ACL's virtual
// memory calls; then other physical memory is mapped at the same addresses and the
// results follow the new pages (no stale mapping of the old ones is used).
int familyVmm() {
    const size_t g = granularity();
    if (g == 0) return printf("rank %d: granularity is 0\n", gRank), 1;
    const uint64_t n = (3 * g / 4) / 4;  // int32 per buffer: several MiB, not a granule multiple
    const size_t bytes = 2 * g * (gSize + 1);
    void* va = nullptr;
    EXPECT_OK(aclrtReserveMemAddress(&va, bytes, 0, nullptr, 1));
    for (int round = 0; round < 2; ++round) {
        aclrtDrvMemHandle h = nullptr;
        aclrtPhysicalMemProp prop = deviceProp();
        EXPECT_OK(aclrtMallocPhysical(&h, bytes, &prop, 0));
        EXPECT_OK(aclrtMapMem(va, bytes, 0, h, 0));
        int32_t* send = static_cast<int32_t*>(va);
        int32_t* recv = send + (g / 4);
        if (checkAllReduce(send, recv, n) || checkAllGather(send, recv, n / gSize) ||
            checkReduceScatter(recv, send, n / gSize) || checkBroadcast(send, n))
            return 1;
        EXPECT_OK(aclrtUnmapMem(va));
        EXPECT_OK(aclrtFreePhysical(h));
        MPI_Barrier(MPI_COMM_WORLD);  // every rank is done with this round's pages
    }
    EXPECT_OK(aclrtReleaseMemAddress(va));
    return 0;
}

// range: HCCL Test's zero-copy flow (-z): one reserved range set on the communicator,
// grown by physical chunks that are mapped and activated as sizes grow; buffers span
// chunks.
int familyRange() {
    const size_t g = granularity();
    const size_t chunks = 4, total = chunks * g;
    void* va = nullptr;
    EXPECT_OK(aclrtReserveMemAddress(&va, total, 0, nullptr, 1));
    EXPECT_OK(HcclCommSetMemoryRange(gComm, va, total, 0, 0));
    EXPECT_FAILS(HcclCommSetMemoryRange(gComm, va, g, 0, 0));  // overlaps the range set
    std::vector<aclrtDrvMemHandle> handles;
    for (size_t c = 0; c < chunks; ++c) {
        char* at = static_cast<char*>(va) + c * g;
        aclrtDrvMemHandle h = nullptr;
        aclrtPhysicalMemProp prop = deviceProp();
        EXPECT_OK(aclrtMallocPhysical(&h, g, &prop, 0));
        EXPECT_FAILS(HcclCommActivateCommMemory(gComm, at, g, 0, h, 0));  // not mapped yet
        EXPECT_OK(aclrtMapMem(at, g, 0, h, 0));
        EXPECT_OK(HcclCommActivateCommMemory(gComm, at, g, 0, h, 0));
        handles.push_back(h);
        // Buffers over every chunk mapped so far, send and receive halves.
        const uint64_t n = (c + 1) * g / 2 / 4;
        int32_t* send = static_cast<int32_t*>(va);
        int32_t* recv = send + n;
        if (checkAllReduce(send, recv, n) || checkReduceScatter(send, recv, n / gSize)) return 1;
    }
    EXPECT_FAILS(HcclCommUnsetMemoryRange(gComm, va));  // memory still activated
    for (size_t c = 0; c < chunks; ++c) {
        char* at = static_cast<char*>(va) + c * g;
        EXPECT_OK(HcclCommDeactivateCommMemory(gComm, at));
        EXPECT_FAILS(HcclCommDeactivateCommMemory(gComm, at));  // twice
        EXPECT_OK(aclrtUnmapMem(at));
        EXPECT_OK(aclrtFreePhysical(handles[c]));
    }
    EXPECT_OK(HcclCommUnsetMemoryRange(gComm, va));
    MPI_Barrier(MPI_COMM_WORLD);
    EXPECT_OK(aclrtReleaseMemAddress(va));
    return 0;
}

// symwin: a symmetric window registered on every rank; collectives on buffers at the
// same offsets of every window, and on buffers outside it.
int familySymwin() {
    const uint64_t sizes[] = {16, 16384, 1u << 20};  // int32 counts: 64 B, 64 KiB, 4 MiB
    const size_t g = granularity(), need = (1024 + 2 * sizes[2] * gSize) * 4, bytes = (need + g - 1) / g * g;
    void* va = nullptr;
    aclrtDrvMemHandle h = nullptr;
    aclrtPhysicalMemProp prop = deviceProp();
    EXPECT_OK(aclrtReserveMemAddress(&va, bytes, 0, nullptr, 1));
    EXPECT_OK(aclrtMallocPhysical(&h, bytes, &prop, 0));
    EXPECT_OK(aclrtMapMem(va, bytes, 0, h, 0));
    HcclCommSymWindow win = nullptr;
    EXPECT_OK(HcclCommSymWinRegister(gComm, va, bytes, &win, 1));
    for (uint64_t n : sizes) {
        int32_t* send = static_cast<int32_t*>(va) + 1024;
        int32_t* recv = send + n * gSize;
        HcclCommSymWindow found = nullptr;
        size_t offset = 0;
        EXPECT_OK(HcclCommSymWinGet(gComm, recv, n * 4, &found, &offset));
        if (found != win || offset != (1024 + n * gSize) * 4) return printf("rank %d: SymWinGet wrong\n", gRank), 1;
        if (checkAllReduce(send, recv, n) || checkAllGather(send, recv, n) || checkReduceScatter(send, recv, n) ||
            checkBroadcast(recv, n))
            return 1;
    }
    std::vector<int32_t> outside(2 * 4096);  // heap memory, in no window
    if (checkAllReduce(outside.data(), outside.data() + 4096, 4096)) return 1;
    EXPECT_OK(HcclCommSymWinDeregister(win));
    EXPECT_FAILS(HcclCommSymWinDeregister(win));
    MPI_Barrier(MPI_COMM_WORLD);
    EXPECT_OK(aclrtUnmapMem(va));
    EXPECT_OK(aclrtFreePhysical(h));
    EXPECT_OK(aclrtReleaseMemAddress(va));
    return 0;
}

// How many operator events the profiling files of this rank hold.
int countProfiledOps(const std::string& dir, int* files) {
    int ops = 0;
    *files = 0;
    DIR* d = opendir(dir.c_str());
    if (d == nullptr) return -1;
    char suffix[64];
    snprintf(suffix, sizeof suffix, ".rank%d.", gRank);
    while (dirent* e = readdir(d)) {
        if (strstr(e->d_name, "hostccl_prof.") != e->d_name || strstr(e->d_name, suffix) == nullptr) continue;
        ++*files;
        std::string path = dir + "/" + e->d_name;
        FILE* f = fopen(path.c_str(), "r");
        if (f == nullptr) continue;
        std::string text;
        char buf[4096];
        size_t got;
        while ((got = fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, got);
        fclose(f);
        for (size_t at = text.find("\"cat\":\"op\""); at != std::string::npos; at = text.find("\"cat\":\"op\"", at + 1)) ++ops;
    }
    closedir(d);
    return ops;
}

// prof: operators between aclprofStart and aclprofStop, and only those, are written
// as traces under aclprofInit's directory.
int familyProf(const char* dirArg) {
    std::string dir = std::string(dirArg) + "/prof";
    std::vector<int32_t> a(4096), b(4096);
    if (checkAllReduce(a.data(), b.data(), 4096)) return 1;  // before: not recorded
    EXPECT_FAILS(aclprofStart(nullptr));
    EXPECT_OK(aclprofInit(dir.c_str(), dir.size()));
    uint32_t dev = 0;
    aclprofConfig* config = aclprofCreateConfig(&dev, 1, ACL_AICORE_PIPE_UTILIZATION, nullptr,
                                                ACL_PROF_ACL_API | ACL_PROF_TASK_TIME | ACL_PROF_HCCL_TRACE);
    if (config == nullptr) return printf("rank %d: aclprofCreateConfig failed\n", gRank), 1;
    EXPECT_OK(aclprofStart(config));
    EXPECT_FAILS(aclprofStart(config));  // already running
    for (int i = 0; i < 3; ++i)
        if (checkAllReduce(a.data(), b.data(), 4096)) return 1;
    if (checkAllGather(a.data(), b.data(), 4096 / gSize)) return 1;
    EXPECT_OK(aclprofStop(config));
    if (checkAllReduce(a.data(), b.data(), 4096)) return 1;  // after: not recorded
    EXPECT_OK(aclprofDestroyConfig(config));
    EXPECT_FAILS(aclprofDestroyConfig(config));
    EXPECT_OK(aclprofFinalize());
    int files = 0;
    const int ops = countProfiledOps(dir, &files);
    if (files != 1 || ops != 4)
        return printf("rank %d: %d profiling file(s) with %d operators, expected 1 with 4\n", gRank, files, ops), 1;
    return 0;
}

// group: every rank sends 4 MiB to every other rank before receiving anything: a
// deadlock if sends waited for receivers, none in a group. A collective inside the
// group keeps its place.
int familyGroup() {
    const uint64_t n = 1u << 20;
    std::vector<void*> out(gSize), in(gSize);
    for (int p = 0; p < gSize; ++p) {
        EXPECT_OK(aclrtMalloc(&out[p], n * 4, ACL_MEM_MALLOC_HUGE_FIRST));
        EXPECT_OK(aclrtMalloc(&in[p], n * 4, ACL_MEM_MALLOC_HUGE_FIRST));
        fill(static_cast<int32_t*>(out[p]), n, gRank * 100 + p);
        memset(in[p], 0, n * 4);
    }
    bool enabled = true;
    EXPECT_OK(HcclGroupStatusGet(&enabled));
    if (enabled) return printf("rank %d: a group reported open before HcclGroupStart\n", gRank), 1;
    EXPECT_FAILS(HcclGroupEnd());
    std::vector<int32_t> a(1000), b(1000);
    fill(a.data(), 1000, gRank);
    EXPECT_OK(HcclGroupStart());
    EXPECT_OK(HcclGroupStart());  // nested
    for (int k = 1; k < gSize; ++k) {
        const int p = (gRank + k) % gSize;
        EXPECT_OK(HcclSend(out[p], n, HCCL_DATA_TYPE_INT32, p, gComm, gStream));
    }
    EXPECT_OK(HcclGroupEnd());
    EXPECT_OK(HcclAllReduce(a.data(), b.data(), 1000, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, gComm, gStream));
    for (int k = 1; k < gSize; ++k) {
        const int p = (gRank + gSize - k) % gSize;
        EXPECT_OK(HcclRecv(in[p], n, HCCL_DATA_TYPE_INT32, p, gComm, gStream));
    }
    EXPECT_OK(HcclGroupStatusGet(&enabled));
    if (!enabled) return printf("rank %d: no group reported open inside one\n", gRank), 1;
    EXPECT_OK(HcclGroupEnd());
    EXPECT_OK(aclrtSynchronizeStream(gStream));
    for (int p = 0; p < gSize; ++p) {
        if (p == gRank) continue;
        const int32_t* got = static_cast<int32_t*>(in[p]);
        for (uint64_t i = 0; i < n; ++i)
            if (got[i] != valueOf(p * 100 + gRank, i)) return wrong("group receive", i, got[i], valueOf(p * 100 + gRank, i));
    }
    for (uint64_t i = 0; i < 1000; ++i)
        if (b[i] != sumOf(i)) return wrong("group allreduce", i, b[i], sumOf(i));
    for (int p = 0; p < gSize; ++p) {
        aclrtFree(out[p]);
        aclrtFree(in[p]);
    }
    return 0;
}

int runFamily(const std::string& family, const char* workDir) {
    if (family == "vmm") return familyVmm();
    if (family == "range") return familyRange();
    if (family == "symwin") return familySymwin();
    if (family == "prof") return familyProf(workDir);
    if (family == "group") return familyGroup();
    printf("unknown family %s (vmm, range, symwin, prof, group)\n", family.c_str());
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &gRank);
    MPI_Comm_size(MPI_COMM_WORLD, &gSize);
    if (argc < 2) {
        if (gRank == 0) printf("usage: hccl_style_test <vmm|range|symwin|prof|group> [work dir]\n");
        MPI_Finalize();
        return 2;
    }
    const std::string family = argv[1];
    const char* workDir = argc > 2 ? argv[2] : "/tmp";
    uint32_t devices = 0;
    aclInit(nullptr);
    aclrtGetDeviceCount(&devices);
    aclrtSetDevice(static_cast<int32_t>(gRank % devices));
    aclrtCreateStream(&gStream);
    HcclRootInfo root;
    if (gRank == 0 && HcclGetRootInfo(&root) != HCCL_SUCCESS) MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Bcast(&root, HCCL_ROOT_INFO_BYTES, MPI_CHAR, 0, MPI_COMM_WORLD);
    int bad = HcclCommInitRootInfo(gSize, &root, gRank, &gComm) != HCCL_SUCCESS;
    if (!bad) bad = runFamily(family, workDir);
    int anyBad = 0;
    MPI_Allreduce(&bad, &anyBad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (gComm != nullptr) HcclCommDestroy(gComm);
    aclrtDestroyStream(gStream);
    aclFinalize();
    if (gRank == 0) printf("%s on %d ranks: %s\n", family.c_str(), gSize, anyBad ? "FAILED" : "ok");
    MPI_Finalize();
    return anyBad ? 1 : 0;
}
