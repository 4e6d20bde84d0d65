// What a communicator costs as it grows: creation time, the first op (which opens
// the links it needs), the steady op time, and per rank the descriptors, resident
// memory and shared memory it holds. Ranks as threads (-p N) or one per process under
// a launcher (RANK/WORLD_SIZE, mpirun, srun). One line per run, for bench/scale/scale.sh:
//   ranks 1024 mode threads op allreduce create_s 4.9 first_op_ms 480 op_us 5100 fds_per_rank 0.1 ...
// Every result is checked (exact int32 sums / the all-to-all's source ranks).
#include <dirent.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "acl/acl.h"
#include "hccl/hccl.h"
#include "hostccl/hostccl.h"

namespace {

using Clock = std::chrono::steady_clock;
double since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

int openDescriptors() {
    int n = 0;
    if (DIR* d = opendir("/proc/self/fd")) {
        while (readdir(d) != nullptr) ++n;
        closedir(d);
    }
    return n - 3;  // ".", ".." and the directory's own descriptor
}

// A field of /proc/self/status in KiB (VmRSS, RssShmem).
double statusKiB(const std::string& field) {
    std::ifstream in("/proc/self/status");
    std::string key;
    double value = 0;
    while (in >> key) {
        if (key == field + ":") {
            in >> value;
            return value;
        }
        std::getline(in, key);
    }
    return 0;
}

struct Options {
    uint32_t threads = 0;  // 0: one rank per process under a launcher
    std::string op = "allreduce";
    uint64_t count = 256;  // int32 elements per rank (alltoall: per peer)
    int iters = 20;
};

struct Sample {
    double firstOpMs = 0, opUs = 0;
    bool wrong = false;
};

// One rank's run: the first op, then `iters` timed ones, each checked.
Sample runRank(const Options& o, HcclComm comm, uint32_t rank, uint32_t n) {
    aclrtStream stream;
    aclrtCreateStream(&stream);
    const bool a2a = o.op == "alltoall";
    const uint64_t total = a2a ? o.count * n : o.count;
    std::vector<int32_t> in(total), out(total);
    for (uint64_t i = 0; i < total; ++i) in[i] = a2a ? int32_t(rank) : int32_t(rank + i % 3);
    auto once = [&] {
        HcclResult rc = a2a ? HcclAlltoAll(in.data(), o.count, HCCL_DATA_TYPE_INT32, out.data(), o.count,
                                           HCCL_DATA_TYPE_INT32, comm, stream)
                            : HcclAllReduce(in.data(), out.data(), o.count, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM,
                                            comm, stream);
        return rc == HCCL_SUCCESS && aclrtSynchronizeStream(stream) == 0;
    };
    auto exact = [&] {
        for (uint64_t i = 0; i < total; ++i) {
            const int64_t want = a2a ? int64_t(i / o.count) : int64_t(n) * (n - 1) / 2 + int64_t(n) * (i % 3);
            if (out[i] != want) return false;
        }
        return true;
    };
    Sample s;
    auto t0 = Clock::now();
    s.wrong = !once() || !exact();
    s.firstOpMs = since(t0) * 1e3;
    std::vector<double> t;
    for (int i = 0; i < o.iters && !s.wrong; ++i) {
        auto t1 = Clock::now();
        s.wrong = !once() || !exact();
        t.push_back(since(t1) * 1e6);
    }
    std::sort(t.begin(), t.end());
    s.opUs = t.empty() ? 0 : t[t.size() / 2];
    aclrtDestroyStream(stream);
    return s;
}

void report(const Options& o, uint32_t n, const char* mode, double createS, double firstOpMs, double opUs,
            double fdsPerRank, double rssMiB, double shmMiB, bool wrong) {
    std::printf("ranks %u mode %s op %s count %llu create_s %.3f first_op_ms %.1f op_us %.1f fds_per_rank %.2f "
                "rss_mib_per_rank %.2f shm_mib_per_rank %.2f result %s\n",
                n, mode, o.op.c_str(), static_cast<unsigned long long>(o.count), createS, firstOpMs, opUs, fdsPerRank,
                rssMiB, shmMiB, wrong ? "WRONG" : "exact");
}

int runThreads(const Options& o) {
    const uint32_t n = o.threads;
    setenv("HOSTCCL_DEVICE_COUNT", std::to_string(n).c_str(), 0);
    const int fds0 = openDescriptors();
    const double rss0 = statusKiB("VmRSS"), shm0 = statusKiB("RssShmem");
    std::vector<HcclComm> comms(n);
    std::vector<int32_t> devices(n);
    for (uint32_t i = 0; i < n; ++i) devices[i] = int32_t(i);
    auto t0 = Clock::now();
    if (HcclResult rc = HcclCommInitAll(n, devices.data(), comms.data()); rc != HCCL_SUCCESS) {
        std::fprintf(stderr, "HcclCommInitAll failed: %s\n", HcclGetErrorString(rc));
        return 1;
    }
    const double createS = since(t0);
    std::vector<Sample> samples(n);
    std::vector<std::thread> threads;
    for (uint32_t r = 0; r < n; ++r)
        threads.emplace_back([&, r] {
            aclrtSetDevice(int32_t(r));
            samples[r] = runRank(o, comms[r], r, n);
        });
    for (auto& t : threads) t.join();
    // Threads are gone; what remains is the communicators' (and the runtime's).
    const double fds = double(openDescriptors() - fds0) / n;
    const double rss = (statusKiB("VmRSS") - rss0) / 1024 / n, shm = (statusKiB("RssShmem") - shm0) / 1024 / n;
    double first = 0, op = 0;
    bool wrong = false;
    for (const Sample& s : samples) first = std::max(first, s.firstOpMs), op = std::max(op, s.opUs), wrong |= s.wrong;
    for (HcclComm c : comms) HcclCommDestroy(c);
    report(o, n, "threads", createS, first, op, fds, rss, shm, wrong);
    return wrong ? 1 : 0;
}

int runProcess(const Options& o) {
    const int fds0 = openDescriptors();
    const double rss0 = statusKiB("VmRSS");
    HcclComm comm = nullptr;
    auto t0 = Clock::now();
    if (HcclResult rc = HostcclCommInitFromEnv(&comm); rc != HCCL_SUCCESS) {
        std::fprintf(stderr, "HostcclCommInitFromEnv failed: %s\n", HcclGetErrorString(rc));
        return 1;
    }
    double v[7] = {since(t0), 0, 0, 0, 0, 0, 0};
    uint32_t rank = 0, n = 1;
    HcclGetRankId(comm, &rank);
    HcclGetRankSize(comm, &n);
    Sample s = runRank(o, comm, rank, n);
    v[1] = s.firstOpMs, v[2] = s.opUs, v[3] = openDescriptors() - fds0;
    v[4] = (statusKiB("VmRSS") - rss0) / 1024, v[5] = statusKiB("RssShmem") / 1024, v[6] = s.wrong;
    aclrtStream stream;
    aclrtCreateStream(&stream);  // the worst rank's figures
    HcclAllReduce(v, v, 7, HCCL_DATA_TYPE_FP64, HCCL_REDUCE_MAX, comm, stream);
    aclrtSynchronizeStream(stream);
    aclrtDestroyStream(stream);
    HcclCommDestroy(comm);
    if (rank == 0) report(o, n, "processes", v[0], v[1], v[2], v[3], v[4], v[5], v[6] != 0);
    return v[6] != 0 ? 1 : 0;
}

}  // namespace

int main(int argc, char** argv) {
    Options o;
    CLI::App app{"hostccl scale benchmark: creation, first op, descriptors and memory per rank"};
    app.add_option("-p,--threads", o.threads, "ranks as threads of this process (default: one rank per process "
                                              "under a launcher)");
    app.add_option("--op", o.op, "allreduce or alltoall")->check(CLI::IsMember({"allreduce", "alltoall"}));
    app.add_option("--count", o.count, "int32 elements per rank (alltoall: per peer)")->check(CLI::Range(1, 1 << 24));
    app.add_option("--iters", o.iters, "timed ops after the first")->check(CLI::Range(0, 100000));
    CLI11_PARSE(app, argc, argv);
    return o.threads > 0 ? runThreads(o) : runProcess(o);
}
