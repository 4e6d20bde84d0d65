// HOSTCCL_TCP_CONGESTION's policies on real sockets: "auto" turns BBR into CUBIC and
// keeps anything else, "system" keeps the kernel's, a name sets it, an algorithm the
// kernel does not offer leaves the socket as it was with the reason; and the
// connections hostccl makes follow the policy from their start.
#include <gtest/gtest.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cstdlib>
#include <cstring>

#include "common/net/congestion.h"
#include "tests/support/loopback.h"

using hostccl::Deadline;
using hostccl::net::Fd;
using hostccl::net::applyCongestionPolicy;
using hostccl::net::congestionControlOf;

namespace {

// Sets `name` on `fd` as an administrator's default would; false if the kernel has no such algorithm.
bool runs(int fd, const char* name) {
    return ::setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, socklen_t(std::strlen(name))) == 0 &&
           congestionControlOf(fd) == name;
}

// A TCP socket not yet connected, as the policy finds it.
struct FreshSocket {
    Fd fd{::socket(AF_INET, SOCK_STREAM, 0)};
    int get() const { return fd.get(); }
};

// A fresh socket given BBR, as a kernel whose default is BBR gives it.
class TcpCongestionOnBbr : public ::testing::Test {
protected:
    void SetUp() override {
        if (!runs(c.get(), "bbr")) GTEST_SKIP() << "this kernel offers no bbr (net.ipv4.tcp_available_congestion_control)";
    }
    FreshSocket c;
    std::string why;
};

}  // namespace

TEST_F(TcpCongestionOnBbr, AutoTurnsBbrIntoCubicAndKeepsAnyOther) {
    EXPECT_TRUE(applyCongestionPolicy(c.get(), "auto", &why)) << why;
    EXPECT_EQ(congestionControlOf(c.get()), "cubic");
    ASSERT_TRUE(runs(c.get(), "reno"));
    EXPECT_TRUE(applyCongestionPolicy(c.get(), "auto", &why)) << why;
    EXPECT_EQ(congestionControlOf(c.get()), "reno");
}

TEST_F(TcpCongestionOnBbr, SystemKeepsTheKernelsAndANameIsSet) {
    EXPECT_TRUE(applyCongestionPolicy(c.get(), "system", &why)) << why;
    EXPECT_EQ(congestionControlOf(c.get()), "bbr");
    EXPECT_TRUE(applyCongestionPolicy(c.get(), "reno", &why)) << why;
    EXPECT_EQ(congestionControlOf(c.get()), "reno");
}

TEST(TcpCongestion, AnAlgorithmTheKernelLacksLeavesTheSocketAndSaysWhy) {
    FreshSocket c;
    const std::string before = congestionControlOf(c.get());
    ASSERT_FALSE(before.empty());
    std::string why;
    EXPECT_FALSE(applyCongestionPolicy(c.get(), "no_such_cc", &why));
    EXPECT_NE(why.find("\"no_such_cc\" not available"), std::string::npos) << why;
    EXPECT_NE(why.find("keeps \"" + before + "\""), std::string::npos) << why;
    EXPECT_EQ(congestionControlOf(c.get()), before);
}

// The connections hostccl makes (its connect and its listener's accepts) run, from
// the start, what the default policy makes of the kernel's default: CUBIC where that is
// BBR (as on the test VM), the kernel's default otherwise.
TEST(TcpCongestion, ConnectionsFollowThePolicyFromTheirStart) {
    ASSERT_EQ(std::getenv("HOSTCCL_TCP_CONGESTION"), nullptr) << "the test needs the default policy";
    const std::string kernels = congestionControlOf(FreshSocket().get());
    ASSERT_FALSE(kernels.empty());
    const std::string expected = kernels.rfind("bbr", 0) == 0 ? "cubic" : kernels;
    Fd up, down;
    hostccl::test::loopbackConnection(Deadline::after(std::chrono::seconds(10)), &up, &down);
    EXPECT_EQ(congestionControlOf(up.get()), expected) << "the kernel's default: " << kernels;
    EXPECT_EQ(congestionControlOf(down.get()), expected) << "the kernel's default: " << kernels;
}
