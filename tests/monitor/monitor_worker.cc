// One rank of a monitored job (tests/monitor/monitor_test.cc): joins through the
// launcher variables it sets itself, runs `ops` allreduces of `count` floats (checking
// every result; a negative `ops`: as many as fit in -ops milliseconds, the ranks
// agreeing by an allreduce of "go on" flags), the rank `slowRank` first sleeping `slowMs` before each (a rank slow
// in its own work: a straggler), then stays `holdMs` so the test can read its
// endpoint, and destroys the communicator.
//   monitor_worker <host:port> <rank> <nranks> <ops> <count> <slowRank> <slowMs> <holdMs>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "acl/acl.h"
#include "hccl/hccl.h"
#include "hostccl/hostccl.h"

namespace {
unsigned gRank = 0;

[[noreturn]] void die(const char* what, int rc) {
    std::fprintf(stderr, "monitor_worker rank %u: %s failed (%d)\n", gRank, what, rc);
    std::exit(1);
}
void check(int rc, const char* what) {
    if (rc != 0) die(what, rc);
}
// Whether every rank is still before `until` (timed runs end on the same op everywhere).
bool goOn(HcclComm comm, aclrtStream stream, std::chrono::steady_clock::time_point until) {
    int32_t mine = std::chrono::steady_clock::now() < until ? 1 : 0, all = 0;
    check(HcclAllReduce(&mine, &all, 1, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_MIN, comm, stream), "HcclAllReduce (go on)");
    check(aclrtSynchronizeStream(stream), "aclrtSynchronizeStream");
    return all == 1;
}
}  // namespace

int main(int argc, char** argv) {
    if (argc != 9) {
        std::fprintf(stderr, "usage: %s <host:port> <rank> <nranks> <ops> <count> <slowRank> <slowMs> <holdMs>\n", argv[0]);
        return 2;
    }
    gRank = unsigned(std::stoul(argv[2]));
    const unsigned n = unsigned(std::stoul(argv[3]));
    const int ops = std::stoi(argv[4]);
    const size_t count = std::stoul(argv[5]);
    const long slowRank = std::stol(argv[6]);
    const int slowMs = std::stoi(argv[7]), holdMs = std::stoi(argv[8]);
    setenv("HOSTCCL_ROOT_ADDR", argv[1], 1);
    setenv("RANK", argv[2], 1);
    setenv("LOCAL_RANK", argv[2], 1);
    setenv("WORLD_SIZE", argv[3], 1);
    check(aclInit(nullptr), "aclInit");
    check(aclrtSetDevice(int32_t(gRank % 8)), "aclrtSetDevice");
    HcclComm comm = nullptr;
    check(HostcclCommInitFromEnv(&comm), "HostcclCommInitFromEnv");
    aclrtStream stream = nullptr;
    check(aclrtCreateStream(&stream), "aclrtCreateStream");
    std::vector<float> in(count), out(count);
    const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(ops < 0 ? -ops : 0);
    for (int op = 0; ops < 0 ? goOn(comm, stream, until) : op < ops; ++op) {
        if (long(gRank) == slowRank) std::this_thread::sleep_for(std::chrono::milliseconds(slowMs));
        for (size_t i = 0; i < count; ++i) in[i] = float((gRank + i + op) % 5);
        check(HcclAllReduce(in.data(), out.data(), count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comm, stream), "HcclAllReduce");
        check(aclrtSynchronizeStream(stream), "aclrtSynchronizeStream");
        for (size_t i = 0; i < count; ++i) {
            float want = 0;
            for (unsigned r = 0; r < n; ++r) want += float((r + i + op) % 5);
            if (out[i] != want) die("allreduce result", int(i));
        }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(holdMs));
    check(HcclCommDestroy(comm), "HcclCommDestroy");
    check(aclrtDestroyStream(stream), "aclrtDestroyStream");
    return 0;
}
