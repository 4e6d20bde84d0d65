// HCCL_EXEC_TIMEOUT and the config's hcclExecTimeOut bound every wait inside an op:
// a rank that never joins an op (but is alive: its heartbeats keep coming) makes
// the waiting rank fail with HCCL_E_TIMEOUT after that many seconds, naming it, and
// the other rank hears of the failure.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <thread>
#include <vector>

#include "hostccl/hostccl.h"
#include "tests/support/world.h"

using namespace hostccl::test;
using Clock = std::chrono::steady_clock;

namespace {

// Rank 0 allreduces alone; returns how long it took to fail and with what.
void expectTimeoutAfterAboutOneSecond(HcclComm lonely, aclrtStream stream, HcclComm idle) {
    int64_t v = 1;
    auto start = Clock::now();
    ASSERT_EQ(HcclAllReduce(&v, &v, 1, HCCL_DATA_TYPE_INT64, HCCL_REDUCE_SUM, lonely, stream), HCCL_SUCCESS);
    EXPECT_EQ(aclrtSynchronizeStream(stream), HCCL_E_TIMEOUT);
    const double s = std::chrono::duration<double>(Clock::now() - start).count();
    EXPECT_GE(s, 0.95);
    EXPECT_LT(s, 3.0);
    std::printf("exec timeout 1 s: the op failed after %.2f s\n", s);
    HcclResult code = HCCL_SUCCESS;
    int32_t culprit = -2;
    char why[512];
    ASSERT_EQ(HostcclCommGetFailure(lonely, &code, &culprit, why, sizeof why), HCCL_SUCCESS);
    EXPECT_EQ(code, HCCL_E_TIMEOUT);
    EXPECT_EQ(culprit, 1) << why;
    EXPECT_NE(std::string(why).find("timed out"), std::string::npos) << why;
    // The idle rank learns of it from the health channel.
    HcclResult heard = HCCL_SUCCESS;
    for (int i = 0; i < 300 && heard == HCCL_SUCCESS; ++i) {
        HcclGetCommAsyncError(idle, &heard);
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_EQ(heard, HCCL_E_TIMEOUT);
}

TEST(ExecTimeout, FromTheEnvironment) {
    setenv("HCCL_EXEC_TIMEOUT", "1", 1);
    World w(2);
    unsetenv("HCCL_EXEC_TIMEOUT");
    ASSERT_TRUE(w.ok());
    expectTimeoutAfterAboutOneSecond(w.comm(0), w.stream(0), w.comm(1));
}

TEST(ExecTimeout, FromTheConfig) {
    HcclRootInfo root;
    ASSERT_EQ(HcclGetRootInfo(&root), HCCL_SUCCESS);
    std::vector<HcclComm> comms(2, nullptr);
    std::vector<std::thread> ranks;
    for (uint32_t r = 0; r < 2; ++r)
        ranks.emplace_back([&, r] {
            aclrtSetDevice(int32_t(r));
            HcclCommConfig config;
            HcclCommConfigInit(&config);
            config.hcclExecTimeOut = 1;
            EXPECT_EQ(HcclCommInitRootInfoConfig(2, &root, r, &config, &comms[r]), HCCL_SUCCESS);
        });
    for (auto& t : ranks) t.join();
    ASSERT_NE(comms[0], nullptr);
    ASSERT_NE(comms[1], nullptr);
    aclrtSetDevice(0);
    aclrtStream stream;
    aclrtCreateStream(&stream);
    expectTimeoutAfterAboutOneSecond(comms[0], stream, comms[1]);
    for (HcclComm c : comms) EXPECT_EQ(HcclCommDestroy(c), HCCL_SUCCESS);
    aclrtDestroyStream(stream);
}

}  // namespace

// A receive from any source that no rank sends to is bounded the same way; with no
// single peer to blame, it names none.
TEST(ExecTimeout, ReceiveFromAnySourceNobodySends) {
    setenv("HCCL_EXEC_TIMEOUT", "1", 1);
    World w(3);
    unsetenv("HCCL_EXEC_TIMEOUT");
    ASSERT_TRUE(w.ok());
    int64_t v = 5;
    uint32_t source = 77;
    auto start = Clock::now();
    ASSERT_EQ(HostcclRecvAny(&v, 1, HCCL_DATA_TYPE_INT64, &source, w.comm(0), w.stream(0)), HCCL_SUCCESS);
    EXPECT_EQ(aclrtSynchronizeStream(w.stream(0)), HCCL_E_TIMEOUT);
    const double s = std::chrono::duration<double>(Clock::now() - start).count();
    EXPECT_GE(s, 0.95);
    EXPECT_LT(s, 3.0);
    EXPECT_EQ(source, 77u);
    EXPECT_EQ(v, 5);
    HcclResult code = HCCL_SUCCESS;
    int32_t culprit = -2;
    char why[512];
    ASSERT_EQ(HostcclCommGetFailure(w.comm(0), &code, &culprit, why, sizeof why), HCCL_SUCCESS);
    EXPECT_EQ(code, HCCL_E_TIMEOUT);
    EXPECT_EQ(culprit, -1) << why;
    EXPECT_NE(std::string(why).find("any source"), std::string::npos) << why;
}
