// A rank dies, exits or stops inside an allreduce of a 4-process job (fault_worker.cc);
// every survivor's op must fail promptly with a fitting code, the log must name the
// failed rank and its host, later calls must fail fast and destroy must be quick.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <cstdio>
#include <fstream>
#include <map>
#include <sstream>
#include <string>

#include "hccl/hccl_types.h"
#include "tests/multiprocess/launcher.h"

using namespace hostccl::test;

namespace {

constexpr uint32_t kRanks = 4;
constexpr uint32_t kVictim = 2;

std::map<std::string, double> readResult(const std::string& path) {
    std::map<std::string, double> r;
    std::ifstream in(path);
    std::string key;
    double value;
    while (in >> key >> value) r[key] = value;
    return r;
}

std::string readAll(const std::string& path) {
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

struct Case {
    std::string scenario;
    std::string transport;  // "" = default (shared memory on one host)
};

class PeerFailure : public ::testing::TestWithParam<Case> {};

TEST_P(PeerFailure, SurvivorsFailPromptlyNamingTheRank) {
    const Case c = GetParam();
    const std::string dir = tempPath("fault-" + c.scenario + (c.transport.empty() ? "" : "-" + c.transport));
    ::mkdir(dir.c_str(), 0700);
    const std::string root = dir + "/root";
    std::remove(root.c_str());
    std::vector<std::vector<std::string>> argvs;
    for (uint32_t r = 0; r < kRanks; ++r)
        argvs.push_back({"/usr/bin/env", "HOSTCCL_HEARTBEAT_TIMEOUT=2", "HOSTCCL_TRANSPORT=" + (c.transport.empty() ? "auto" : c.transport),
                         HOSTCCL_FAULT_WORKER, root, std::to_string(r), std::to_string(kRanks), c.scenario,
                         std::to_string(kVictim), dir});
    std::vector<bool> linger(kRanks, false);
    linger[kVictim] = true;
    auto results = runProcesses(argvs, 120, linger);
    std::ifstream victimTime(dir + "/victim.time");
    double diedAtNs = 0;
    ASSERT_TRUE(victimTime >> diedAtNs) << "the victim never reached its step";
    for (uint32_t r = 0; r < kRanks; ++r) {
        if (r == kVictim) continue;
        SCOPED_TRACE("rank " + std::to_string(r));
        EXPECT_FALSE(results[r].timedOut);
        EXPECT_EQ(results[r].exitCode, 0) << readAll(dir + "/rank" + std::to_string(r) + ".log");
        auto res = readResult(dir + "/rank" + std::to_string(r) + ".result");
        const int code = int(res["code"]);
        if (c.scenario == "stop") {
            EXPECT_EQ(code, HCCL_E_TIMEOUT);
        } else {
            EXPECT_TRUE(code == HCCL_E_REMOTE || code == HCCL_E_TCP_TRANSFER) << "code " << code;
        }
        EXPECT_EQ(res["async"], code);
        EXPECT_EQ(res["again"], code) << "a later call must fail with the same code";
        const double detectMs = (res["failed_at_ns"] - diedAtNs) / 1e6;
        const double limitMs = c.scenario == "stop" ? 2000 + 3000 : 5000;  // stop: the heartbeat timeout is 2 s
        EXPECT_LT(detectMs, limitMs);
        EXPECT_LT(res["failfast_ms"], 50.0);
        EXPECT_EQ(res["destroy"], 0);
        EXPECT_LT(res["destroy_ms"], 1000.0);
        if (c.scenario == "shrink") {
            EXPECT_EQ(res["shrink_ok"], 1);
        }
        const std::string log = readAll(dir + "/rank" + std::to_string(r) + ".log");
        EXPECT_NE(log.find("rank 2 (host "), std::string::npos) << "the log must name the failed rank:\n" << log;
        std::printf("%s%s: rank %u failed %.0f ms after the victim (%s), next call %.2f ms, destroy %.1f ms%s\n",
                    c.scenario.c_str(), c.transport.empty() ? "" : (" over " + c.transport).c_str(), r, detectMs,
                    code == HCCL_E_REMOTE ? "HCCL_E_REMOTE" : code == HCCL_E_TIMEOUT ? "HCCL_E_TIMEOUT" : "HCCL_E_TCP_TRANSFER",
                    res["failfast_ms"], res["destroy_ms"],
                    c.scenario == "shrink" ? (", shrink " + std::to_string(res["shrink_ms"]) + " ms").c_str() : "");
    }
}

INSTANTIATE_TEST_SUITE_P(Scenarios, PeerFailure,
                         ::testing::Values(Case{"kill", ""}, Case{"kill", "tcp"}, Case{"exit", ""}, Case{"stop", ""},
                                           Case{"stop", "tcp"}, Case{"shrink", ""}, Case{"shrink", "tcp"}),
                         [](const ::testing::TestParamInfo<Case>& i) {
                             return i.param.scenario + (i.param.transport.empty() ? "" : "_" + i.param.transport);
                         });

}  // namespace
