// Stream threads kept to one core each, ranks spread over the cores
// (core/topology/worker_affinity.h), and the process-state check that lets a link stop
// waiting for a peer that died mid-read (common/process_state.h).
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <dirent.h>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "acl/acl.h"
#include "algorithms/hierarchical/core_groups.h"
#include "common/process_state.h"
#include "core/topology/worker_affinity.h"
#include "hccl/hccl.h"
#include "tests/support/scoped_env.h"

namespace {

std::vector<int> allowedCpus() {
    cpu_set_t set;
    EXPECT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
    std::vector<int> cpus;
    for (int c = 0; c < CPU_SETSIZE; ++c)
        if (CPU_ISSET(c, &set)) cpus.push_back(c);
    return cpus;
}

bool processUnbound() { return long(allowedCpus().size()) == sysconf(_SC_NPROCESSORS_ONLN) && allowedCpus().size() >= 2; }

using hostccl::test::ScopedEnv;

// The CPU lists of this process's threads that may run on exactly one CPU.
std::multiset<std::string> singleCpuThreads() {
    std::multiset<std::string> found;
    DIR* d = opendir("/proc/self/task");
    while (dirent* e = readdir(d)) {
        if (e->d_name[0] == '.') continue;
        std::ifstream status(std::string("/proc/self/task/") + e->d_name + "/status");
        for (std::string line; std::getline(status, line);) {
            if (line.rfind("Cpus_allowed_list:", 0) != 0) continue;
            std::string list = line.substr(line.find_first_not_of(" \t", 18));
            if (list.find_first_of(",-") == std::string::npos) found.insert(list);
        }
    }
    closedir(d);
    return found;
}

// `n` ranks as threads, one allreduce of `count` floats each, then the single-CPU
// threads seen.
std::multiset<std::string> bindingsAfterAnAllreduce(int n, size_t count) {
    std::vector<int32_t> devices(n);
    for (int r = 0; r < n; ++r) devices[r] = r;
    std::vector<HcclComm> comms(n);
    EXPECT_EQ(HcclCommInitAll(uint32_t(n), devices.data(), comms.data()), HCCL_SUCCESS);
    std::vector<aclrtStream> streams(n);
    const float sum = float(n * (n + 1) / 2);
    std::vector<std::thread> ranks;
    for (int r = 0; r < n; ++r)
        ranks.emplace_back([&, r] {
            aclrtSetDevice(r);
            EXPECT_EQ(aclrtCreateStream(&streams[r]), ACL_SUCCESS);
            std::vector<float> mine(count, float(r + 1)), out(count);
            EXPECT_EQ(HcclAllReduce(mine.data(), out.data(), count, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, comms[r],
                                    streams[r]),
                      HCCL_SUCCESS);
            EXPECT_EQ(aclrtSynchronizeStream(streams[r]), ACL_SUCCESS);
            EXPECT_EQ(out.front(), sum);
            EXPECT_EQ(out.back(), sum);
        });
    for (auto& t : ranks) t.join();
    std::multiset<std::string> seen = singleCpuThreads();
    for (int r = 0; r < n; ++r) {
        aclrtDestroyStream(streams[r]);
        HcclCommDestroy(comms[r]);
    }
    return seen;
}

}  // namespace

TEST(WorkerAffinity, SpreadsRanksOverTheCoresInRankOrder) {
    if (!processUnbound()) GTEST_SKIP() << "this process is bound to some of the cores (or the machine has one): nothing to spread";
    const std::vector<int> cpus = allowedCpus();
    const uint32_t n = static_cast<uint32_t>(cpus.size());
    for (uint32_t i = 0; i < n; ++i) {
        EXPECT_EQ(hostccl::workerCpuFor({i, n}), cpus[i]);
        EXPECT_EQ(hostccl::workerCpuFor({i, n, false}), cpus[i]) << "hosts emulated here, not crowded: in order too";
    }
    // More ranks than cores: each core takes a block of neighbouring ranks, the first
    // cores one more when they do not divide evenly (2n + 1 ranks: 3, then 2 each).
    for (uint32_t i = 0; i < 4 * n; ++i) EXPECT_EQ(hostccl::workerCpuFor({i, 4 * n}), cpus[i / 4]) << "rank " << i;
    const uint32_t odd = 2 * n + 1;
    std::vector<int> perCore(n, 0);
    int last = -1;
    for (uint32_t i = 0; i < odd; ++i) {
        const int cpu = hostccl::workerCpuFor({i, odd});
        const size_t core = size_t(std::find(cpus.begin(), cpus.end(), cpu) - cpus.begin());
        ASSERT_LT(core, cpus.size()) << "rank " << i;
        EXPECT_GE(int(core), last) << "rank " << i << ": blocks run in rank order";
        last = int(core);
        perCore[core]++;
    }
    for (uint32_t c = 0; c < n; ++c)
        EXPECT_TRUE(perCore[c] == 2 || perCore[c] == 3) << "core " << c << ": " << perCore[c];
    // Hosts emulated on this machine: round robin, so each host's ranks spread over the
    // cores as on a real host (two hosts of n ranks: each host's ranks one per core).
    for (uint32_t i = 0; i < 2 * n; ++i)
        EXPECT_EQ(hostccl::workerCpuFor({i, 2 * n, false}), cpus[i % n]) << "rank " << i;
    ScopedEnv off("HOSTCCL_BIND_WORKERS", "0");
    EXPECT_EQ(hostccl::workerCpuFor({0, 2}), -1);
}

// The core-leaders algorithms group ranks as their stream threads share the cores:
// each group is the block one core holds, led by its lowest rank.
TEST(WorkerAffinity, CoreGroupsAreTheBlocksEachCoreHolds) {
    for (uint32_t cores = 1; cores <= 8; ++cores)
        for (uint32_t n = cores + 1; n <= 40; ++n) {
            uint32_t expectedLeader = 0, smallest = n, largest = 0;
            for (uint32_t g = 0; g < cores; ++g) {
                const hostccl::CoreGroups groups(n, cores, 0);
                ASSERT_EQ(groups.leaderOf(g), expectedLeader) << n << " ranks, " << cores << " cores, group " << g;
                for (uint32_t r = groups.leaderOf(g); r < groups.endOf(g); ++r) {
                    const hostccl::CoreGroups at(n, cores, r);
                    ASSERT_EQ(at.mine, g) << n << " ranks, " << cores << " cores, rank " << r;
                    ASSERT_EQ(at.leader(), groups.leaderOf(g));
                }
                smallest = std::min(smallest, groups.sizeOf(g));
                largest = std::max(largest, groups.sizeOf(g));
                expectedLeader = groups.endOf(g);
            }
            EXPECT_EQ(expectedLeader, n) << "every rank in a group";
            EXPECT_LE(largest - smallest, 1u) << n << " ranks, " << cores << " cores";
        }
    if (!processUnbound()) GTEST_SKIP() << "this process is bound to some of the cores: no placement to compare with";
    const std::vector<int> cpus = allowedCpus();
    const uint32_t cores = uint32_t(cpus.size());
    for (uint32_t n : {cores + 1, 3 * cores, 8 * cores + 3})
        for (uint32_t r = 0; r < n; ++r)
            EXPECT_EQ(hostccl::workerCpuFor({r, n}), cpus[hostccl::CoreGroups(n, cores, r).mine])
                << "rank " << r << " of " << n << ": its group is not the core its stream thread keeps to";
}

// The first communicator of a device with two or more ranks here decides; a
// sub-communicator that numbers the machine's ranks differently gets the same CPU.
TEST(WorkerAffinity, TheFirstCommunicatorOfADeviceDecides) {
    if (!processUnbound()) GTEST_SKIP() << "this process is bound to some of the cores (or the machine has one)";
    const std::vector<int> cpus = allowedCpus();
    EXPECT_EQ(hostccl::claimWorkerCpu(1007, {1, 2}), cpus[1]);
    EXPECT_EQ(hostccl::claimWorkerCpu(1007, {0, 2}), cpus[1]) << "a sub-communicator's numbering must not move it";
    EXPECT_EQ(hostccl::claimWorkerCpu(1008, {0, 1}), -1) << "one rank here says nothing about placement";
    EXPECT_EQ(hostccl::claimWorkerCpu(1008, {1, 2}), cpus[1]) << "so a later communicator decides";
    {
        ScopedEnv off("HOSTCCL_BIND_WORKERS", "0");
        EXPECT_EQ(hostccl::claimWorkerCpu(1009, {1, 2}), -1);
    }
    EXPECT_EQ(hostccl::claimWorkerCpu(1009, {1, 2}), cpus[1]) << "switched off, nothing was decided";
    const uint32_t crowd = uint32_t(cpus.size()) + 1;
    EXPECT_EQ(hostccl::claimWorkerCpu(1010, {crowd - 1, crowd}), cpus.back()) << "crowded: the last block";
    EXPECT_EQ(hostccl::claimWorkerCpu(1010, {0, 2}), cpus.back()) << "the first decision stands";
}

TEST(WorkerAffinity, LeavesABoundProcessAlone) {
    const std::vector<int> cpus = allowedCpus();
    std::thread narrowed([&] {  // the mask read is the calling thread's
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpus[0], &one);
        ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
        EXPECT_EQ(hostccl::workerCpuFor({0, 2}), -1);
        if (cpus.size() >= 3) {  // bound to a subset of several cores: still the launcher's choice
            cpu_set_t two;
            CPU_ZERO(&two);
            CPU_SET(cpus[0], &two);
            CPU_SET(cpus[1], &two);
            ASSERT_EQ(sched_setaffinity(0, sizeof two, &two), 0);
            EXPECT_EQ(hostccl::workerCpuFor({0, 2}), -1);
        } else {
            std::printf("[ NOTE ] %zu cores: the bound-to-a-subset-of-several-cores case needs 3, not run\n", cpus.size());
        }
    });
    narrowed.join();
}

TEST(WorkerAffinity, KeepsTheCallingThreadOnItsCore) {
    const std::vector<int> cpus = allowedCpus();
    std::thread t([&] {
        hostccl::keepThisThreadOn(cpus.back());
        cpu_set_t set;
        ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
        EXPECT_EQ(CPU_COUNT(&set), 1);
        EXPECT_TRUE(CPU_ISSET(cpus.back(), &set));
        hostccl::keepThisThreadOn(-1);  // -1: left as it is
        ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
        EXPECT_EQ(CPU_COUNT(&set), 1);
        hostccl::releaseThisThread();  // back to every allowed CPU
        ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
        EXPECT_EQ(CPU_COUNT(&set), int(cpus.size()));
        hostccl::keepThisThreadOn(cpus.back());  // and bound again after a release
        ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
        EXPECT_EQ(CPU_COUNT(&set), 1);
    });
    t.join();
}

// A thread bound by its own code keeps that binding through a release.
TEST(WorkerAffinity, ReleasingLeavesAThreadTheCallDidNotBind) {
    const std::vector<int> cpus = allowedCpus();
    std::thread t([&] {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpus.front(), &one);
        ASSERT_EQ(sched_setaffinity(0, sizeof one, &one), 0);
        hostccl::releaseThisThread();
        cpu_set_t set;
        ASSERT_EQ(sched_getaffinity(0, sizeof set, &set), 0);
        EXPECT_EQ(CPU_COUNT(&set), 1);
        EXPECT_TRUE(CPU_ISSET(cpus.front(), &set));
    });
    t.join();
}

// 512 KiB: a large op, which runs on the stream's thread (a small one may run on the
// thread that waits for it: hostccl::api::callerRunLimit).
constexpr size_t kLargeCount = size_t(128) << 10;

// The two ranks' stream threads end on two different cores, and only with binding on.
TEST(WorkerAffinity, TwoThreadRanksRunOnTwoCores) {
    if (!processUnbound()) GTEST_SKIP() << "this process is bound to some of the cores (or the machine has one)";
    {
        ScopedEnv off("HOSTCCL_BIND_WORKERS", "0");
        EXPECT_TRUE(bindingsAfterAnAllreduce(2, kLargeCount).empty());
    }
    const std::multiset<std::string> bound = bindingsAfterAnAllreduce(2, kLargeCount);
    const std::vector<int> cpus = allowedCpus();
    EXPECT_EQ(bound, (std::multiset<std::string>{std::to_string(cpus[0]), std::to_string(cpus[1])}));
}

// One rank more than cores: every stream thread is bound, the first core taking two,
// and an 8-byte op, which a waiting caller could run itself, is left to them.
TEST(WorkerAffinity, RanksOutnumberingCoresShareThemAndRunTheirOpsThere) {
    if (!processUnbound()) GTEST_SKIP() << "this process is bound to some of the cores (or the machine has one)";
    const std::vector<int> cpus = allowedCpus();
    const int n = int(cpus.size()) + 1;
    std::multiset<std::string> expected;
    for (int r = 0; r < n; ++r) expected.insert(std::to_string(cpus[size_t(r) * cpus.size() / size_t(n)]));
    EXPECT_EQ(bindingsAfterAnAllreduce(n, 2), expected);
}

TEST(ProcessState, AZombieHasEndedAndALiveChildHasNot) {
    const pid_t live = fork();
    if (live == 0) {
        pause();
        _exit(0);
    }
    const pid_t zombie = fork();
    if (zombie == 0) _exit(3);
    // Wait for the zombie state without reaping it.
    siginfo_t info{};
    ASSERT_EQ(waitid(P_PID, id_t(zombie), &info, WEXITED | WNOWAIT), 0);
    EXPECT_TRUE(hostccl::processEnded(zombie));
    EXPECT_FALSE(hostccl::processEnded(live));
    EXPECT_FALSE(hostccl::processEnded(getpid()));
    kill(live, SIGKILL);
    waitpid(live, nullptr, 0);
    waitpid(zombie, nullptr, 0);
    EXPECT_TRUE(hostccl::processEnded(zombie)) << "reaped: no such process";
}
