// One rank of a multi-process job, started by multiprocess_test. It joins through
// root info (rank 0 writes the blob to a file, as a launcher would broadcast it) or
// through a rank table, then runs a suite of collectives with exact checks,
// including a sub-communicator and two communicators used at once on two streams.
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "common/datatype.h"
#include "hccl/hccl.h"
#include "tests/support/matrix.h"

namespace {

#define CHECK(cond, ...)                                  \
    do {                                                  \
        if (!(cond)) {                                    \
            std::fprintf(stderr, "rank %u: ", gRank);     \
            std::fprintf(stderr, __VA_ARGS__);            \
            std::fprintf(stderr, " (line %d)\n", __LINE__); \
            std::exit(1);                                 \
        }                                                 \
    } while (0)

uint32_t gRank = 0;

void publishRootInfo(const std::string& path, const HcclRootInfo& info) {
    std::string tmp = path + ".tmp";
    std::ofstream(tmp, std::ios::binary).write(info.internal, HCCL_ROOT_INFO_BYTES);
    std::rename(tmp.c_str(), path.c_str());
}

HcclRootInfo awaitRootInfo(const std::string& path) {
    HcclRootInfo info{};
    for (int i = 0; i < 3000; ++i) {  // 30 s
        std::ifstream in(path, std::ios::binary);
        if (in.read(info.internal, HCCL_ROOT_INFO_BYTES)) return info;
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    CHECK(false, "root info file %s never appeared", path.c_str());
    return info;
}

// Where a rank's buffers live: the direct algorithms map aclrtMalloc memory of the
// other processes, and fall back on every rank when any rank's buffers are malloc'd.
enum class Memory { Host, Device, Mixed };

template <typename T>
struct RankBuffer {
    RankBuffer(uint64_t count, bool device) : count(count) {
        if (device) CHECK(aclrtMalloc(&dev, count * sizeof(T), ACL_MEM_MALLOC_HUGE_FIRST) == 0, "aclrtMalloc");
        else host.resize(count);
    }
    ~RankBuffer() {
        if (dev != nullptr) aclrtFree(dev);
    }
    T* data() { return dev != nullptr ? static_cast<T*>(dev) : host.data(); }
    uint64_t count;
    void* dev = nullptr;
    std::vector<T> host;
};

void allReduceCheck(HcclComm comm, aclrtStream stream, uint64_t count, uint32_t rank, uint32_t n, Memory memory) {
    const bool device = memory == Memory::Device || (memory == Memory::Mixed && rank % 2 == 0);
    RankBuffer<int32_t> buf(count, device), out(count, device);
    for (uint64_t i = 0; i < count; ++i) buf.data()[i] = int32_t(rank + 1) * int32_t(i % 100 + 1);
    CHECK(HcclAllReduce(buf.data(), out.data(), count, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, comm, stream) == 0,
          "allreduce enqueue");
    CHECK(aclrtSynchronizeStream(stream) == 0, "allreduce sync");
    const int32_t ranksSum = int32_t(n * (n + 1) / 2);
    for (uint64_t i = 0; i < count; ++i)
        CHECK(out.data()[i] == ranksSum * int32_t(i % 100 + 1), "allreduce (memory kind %d) element %lu = %d",
              int(memory), (unsigned long)i, out.data()[i]);
}

void gatherAndBroadcast(HcclComm comm, aclrtStream stream, uint32_t rank, uint32_t n) {
    const uint64_t count = 333;
    std::vector<float> mine(count, float(rank)), all(count * n, -1.f);
    CHECK(HcclAllGather(mine.data(), all.data(), count, HCCL_DATA_TYPE_FP32, comm, stream) == 0, "allgather");
    std::vector<double> b(1000, rank == n - 1 ? 2.5 : 0.0);
    CHECK(HcclBroadcast(b.data(), b.size(), HCCL_DATA_TYPE_FP64, n - 1, comm, stream) == 0, "broadcast");
    CHECK(aclrtSynchronizeStream(stream) == 0, "sync");
    for (uint32_t r = 0; r < n; ++r)
        for (uint64_t i = 0; i < count; ++i) CHECK(all[r * count + i] == float(r), "allgather block %u", r);
    for (double x : b) CHECK(x == 2.5, "broadcast value %f", x);
}

// The even ranks form a sub-communicator; all ranks also run a world allreduce on a
// second stream at the same time as the sub-communicator's allreduce.
void subCommAndConcurrency(HcclComm world, uint32_t rank, uint32_t n) {
    std::vector<uint32_t> evens;
    for (uint32_t r = 0; r < n; r += 2) evens.push_back(r);
    bool member = rank % 2 == 0;
    HcclCommConfig config;
    HcclCommConfigInit(&config);
    HcclComm sub = nullptr;
    CHECK(HcclCreateSubCommConfig(&world, member ? uint32_t(evens.size()) : 0, member ? evens.data() : nullptr,
                                  member ? 7 : 0xFFFFFFFF, member ? rank / 2 : 0, &config, &sub) == 0,
          "create sub comm");
    CHECK(member == (sub != nullptr), "sub comm membership");
    aclrtStream s1, s2;
    aclrtCreateStream(&s1);
    aclrtCreateStream(&s2);
    std::vector<int64_t> a(50000, 1), b(50000, rank);
    CHECK(HcclAllReduce(a.data(), a.data(), a.size(), HCCL_DATA_TYPE_INT64, HCCL_REDUCE_SUM, world, s1) == 0, "world ar");
    if (sub) CHECK(HcclAllReduce(b.data(), b.data(), b.size(), HCCL_DATA_TYPE_INT64, HCCL_REDUCE_MAX, sub, s2) == 0, "sub ar");
    CHECK(aclrtSynchronizeStream(s1) == 0 && aclrtSynchronizeStream(s2) == 0, "sync two streams");
    for (int64_t x : a) CHECK(x == int64_t(n), "world sum %ld", (long)x);
    if (sub) {
        for (int64_t x : b) CHECK(x == int64_t(evens.back()), "sub max %ld", (long)x);
        uint32_t subSize = 0;
        char name[COMM_NAME_MAX_LENGTH];
        CHECK(HcclGetRankSize(sub, &subSize) == 0 && subSize == evens.size(), "sub size");
        CHECK(HcclGetCommName(sub, name) == 0 && std::strstr(name, "_sub_7") != nullptr, "sub name %s", name);
        CHECK(HcclCommDestroy(sub) == 0, "destroy sub");
    }
    aclrtDestroyStream(s1);
    aclrtDestroyStream(s2);
}

// Runs every case of one matrix family on this rank (the other processes run the
// same cases in the same order); "all": every family, one after the other, on the
// one communicator (where starting a job per family costs too much: an emulated guest);
// "all:int8,fp32": every family in those dtypes only (cases without a dtype always).
void runMatrixFamily(HcclComm comm, aclrtStream stream, uint32_t rank, uint32_t n, const std::string& family,
                     const std::string& dtypes = "") {
    if (family.rfind("all", 0) == 0) {
        std::string only;  // ",int8,fp32," (appended piecewise: g++ 12 misreads "," + s + "," as overlapping)
        if (family.size() > 4 && family[3] == ':') only.append(",").append(family, 4).append(",");
        for (const std::string& f : hostccl::test::matrixFamilies()) {
            runMatrixFamily(comm, stream, rank, n, f, only);
            if (rank == 0) std::printf("%u ranks: %s ok\n", n, f.c_str());
        }
        return;
    }
    if (const size_t colon = family.find(':'); colon != std::string::npos && dtypes.empty()) {  // "AllReduce:int8,fp32"
        std::string only;
        only.append(",").append(family, colon + 1).append(",");
        runMatrixFamily(comm, stream, rank, n, family.substr(0, colon), only);
        return;
    }
    size_t typed = 0, ran = 0;
    for (const auto& c : hostccl::test::matrixCases(family, n)) {
        const std::string dtype = c.dtype < 0 ? "" : hostccl::dtypeName(HcclDataType(c.dtype));
        typed += !dtype.empty();
        if (!dtypes.empty() && !dtype.empty() && dtypes.find("," + dtype + ",") == std::string::npos) continue;
        ran += !dtype.empty();
        std::string err = c.run(hostccl::test::RankContext{rank, n, comm, stream});
        CHECK(err.empty(), "%s: %s", c.name.c_str(), err.c_str());
    }
    CHECK(typed == 0 || ran > 0, "%s: no case in the dtypes %s", family.c_str(), dtypes.c_str());
}

}  // namespace

int main(int argc, char** argv) {
    if (argc != 5 && argc != 6) {
        std::fprintf(stderr, "usage: %s rootinfo|ranktable <file> <rank> <nranks> [matrix-family[:dtype,...]|all|all:dtype,...]\n", argv[0]);
        return 2;
    }
    std::string mode = argv[1], file = argv[2];
    gRank = uint32_t(std::stoul(argv[3]));
    uint32_t n = uint32_t(std::stoul(argv[4]));
    CHECK(aclInit(nullptr) == 0, "aclInit");
    CHECK(aclrtSetDevice(int32_t(gRank % 8)) == 0, "set device");
    HcclComm comm = nullptr;
    if (mode == "rootinfo") {
        HcclRootInfo info{};
        if (gRank == 0) {
            CHECK(HcclGetRootInfo(&info) == 0, "HcclGetRootInfo");
            publishRootInfo(file, info);
        } else {
            info = awaitRootInfo(file);
        }
        CHECK(HcclCommInitRootInfo(n, &info, gRank, &comm) == 0, "HcclCommInitRootInfo");
    } else {
        CHECK(HcclCommInitClusterInfo(file.c_str(), gRank, &comm) == 0, "HcclCommInitClusterInfo");
    }
    uint32_t size = 0, id = 0;
    CHECK(HcclGetRankSize(comm, &size) == 0 && size == n, "rank size %u", size);
    CHECK(HcclGetRankId(comm, &id) == 0 && id == gRank, "rank id %u", id);
    aclrtStream stream;
    CHECK(aclrtCreateStream(&stream) == 0, "stream");
    if (argc == 6) {
        runMatrixFamily(comm, stream, gRank, n, argv[5]);
    } else {
        for (uint64_t count : {1ull, 1000ull, 1ull << 20}) allReduceCheck(comm, stream, count, gRank, n, Memory::Host);
        for (Memory m : {Memory::Device, Memory::Mixed, Memory::Host})
            allReduceCheck(comm, stream, 1ull << 20, gRank, n, m);
        gatherAndBroadcast(comm, stream, gRank, n);
        subCommAndConcurrency(comm, gRank, n);
    }
    CHECK(HcclBarrier(comm, stream) == 0 && aclrtSynchronizeStream(stream) == 0, "barrier");
    CHECK(HcclCommDestroy(comm) == 0, "destroy");
    aclrtDestroyStream(stream);
    aclFinalize();
    std::printf("rank %u ok\n", gRank);
    return 0;
}
