// Ranks as separate processes, joined through root info and through a rank table.
#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>

#include "tests/multiprocess/launcher.h"
#include "tests/support/matrix.h"

using namespace hostccl::test;

namespace {

void expectAllExitZero(const std::vector<ProcessResult>& results) {
    for (size_t r = 0; r < results.size(); ++r) {
        EXPECT_FALSE(results[r].timedOut) << "rank " << r << " did not finish in time";
        EXPECT_EQ(results[r].exitCode, 0) << "rank " << r;
    }
}

class MultiProcess : public ::testing::TestWithParam<uint32_t> {};

TEST_P(MultiProcess, RootInfo) {
    const uint32_t n = GetParam();
    std::string file = tempPath("rootinfo-" + std::to_string(n));
    std::remove(file.c_str());
    std::vector<std::vector<std::string>> argvs;
    for (uint32_t r = 0; r < n; ++r) argvs.push_back({HOSTCCL_WORKER, "rootinfo", file, std::to_string(r), std::to_string(n)});
    expectAllExitZero(runProcesses(argvs, 120));
    std::remove(file.c_str());
}

// Two emulated hosts (HOSTCCL_HOST_ID, passed per process): ranks on one host talk
// over shared memory, across hosts over TCP, in one communicator.
TEST_P(MultiProcess, MixedTransportsAcrossEmulatedHosts) {
    const uint32_t n = GetParam();
    std::string file = tempPath("mixed-" + std::to_string(n));
    std::remove(file.c_str());
    std::vector<std::vector<std::string>> argvs;
    for (uint32_t r = 0; r < n; ++r)
        argvs.push_back({"/usr/bin/env", "HOSTCCL_HOST_ID=emulated-host-" + std::to_string(r % 2), HOSTCCL_WORKER,
                         "rootinfo", file, std::to_string(r), std::to_string(n)});
    expectAllExitZero(runProcesses(argvs, 120));
    std::remove(file.c_str());
}

// A receive from any source watches shared-memory and TCP links at once: rank 1
// shares rank 0's emulated host (shared memory), ranks 2 and 3 reach it over TCP.
TEST(MultiProcessAnySource, AcrossEmulatedHosts) {
    const uint32_t n = 4;
    std::string file = tempPath("any-source");
    std::remove(file.c_str());
    std::vector<std::vector<std::string>> argvs;
    for (uint32_t r = 0; r < n; ++r)
        argvs.push_back({"/usr/bin/env", "HOSTCCL_HOST_ID=emulated-host-" + std::to_string(r / 2), HOSTCCL_WORKER,
                         "rootinfo", file, std::to_string(r), std::to_string(n), "RecvAny"});
    expectAllExitZero(runProcesses(argvs, 120));
    std::remove(file.c_str());
}

// Two "servers" (the first half of the ranks and the rest), all on 127.0.0.1.
TEST_P(MultiProcess, RankTable) {
    const uint32_t n = GetParam();
    const uint32_t firstServer = (n + 1) / 2;
    std::string json = "{\"status\":\"completed\",\"version\":\"1.0\",\"server_count\":\"" +
                       std::to_string(n > 1 ? 2 : 1) + "\",\"server_list\":[";
    for (uint32_t s = 0; s < (n > 1 ? 2u : 1u); ++s) {
        json += std::string(s ? "," : "") + "{\"server_id\":\"node_" + std::to_string(s) + "\",\"host_ip\":\"127.0.0.1\",\"device\":[";
        uint32_t lo = s == 0 ? 0 : firstServer, hi = s == 0 ? firstServer : n;
        for (uint32_t r = lo; r < hi; ++r) {
            json += std::string(r > lo ? "," : "") + "{\"device_id\":\"" + std::to_string(r - lo) +
                    "\",\"device_ip\":\"127.0.0.1\",\"rank_id\":\"" + std::to_string(r) + "\"";
            if (r == 0) json += ",\"host_port\":\"" + std::to_string(freeTcpPort()) + "\"";
            json += "}";
        }
        json += "]}";
    }
    json += "]}";
    std::string file = tempPath("ranktable-" + std::to_string(n) + ".json");
    std::ofstream(file) << json;
    std::vector<std::vector<std::string>> argvs;
    for (uint32_t r = 0; r < n; ++r) argvs.push_back({HOSTCCL_WORKER, "ranktable", file, std::to_string(r), std::to_string(n)});
    expectAllExitZero(runProcesses(argvs, 120));
    std::remove(file.c_str());
}

// The collective matrix with ranks as processes, one type per size (links between
// processes move bytes; every type runs in the threads' matrix): one job per family.
using MatrixParam = std::tuple<std::string, uint32_t>;
class ProcessMatrix : public ::testing::TestWithParam<MatrixParam> {};

TEST_P(ProcessMatrix, ExactResultsOnEveryRank) {
    const std::string family = std::get<0>(GetParam());
    const uint32_t n = std::get<1>(GetParam());
    std::string file = tempPath("matrix-" + family + "-" + std::to_string(n));
    std::remove(file.c_str());
    std::vector<std::vector<std::string>> argvs;
    for (uint32_t r = 0; r < n; ++r)
        argvs.push_back({HOSTCCL_WORKER, "rootinfo", file, std::to_string(r), std::to_string(n),
                         family + ":" + hostccl::test::kOneTypePerSize});
    expectAllExitZero(runProcesses(argvs, 300));
    std::remove(file.c_str());
}

INSTANTIATE_TEST_SUITE_P(Processes, ProcessMatrix,
                         ::testing::Combine(::testing::ValuesIn(hostccl::test::matrixFamilies()),
                                            ::testing::Values(1u, 2u, 3u, 4u, 5u, 8u)),
                         [](const auto& info) {
                             return std::get<0>(info.param) + "_" + std::to_string(std::get<1>(info.param)) + "ranks";
                         });

INSTANTIATE_TEST_SUITE_P(Ranks, MultiProcess, ::testing::Values(1u, 2u, 3u, 4u, 5u, 8u),
                         [](const auto& info) { return std::to_string(info.param) + "ranks"; });

}  // namespace
