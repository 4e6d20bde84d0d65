// connectTcp's treatment of a refused connection: retried until the deadline by
// default (a peer's listener may not be up yet), given up at once with
// OnRefused::Fail (a notice's target whose process is gone: retrying held up a
// survivor's destroy by the notice step, a second).
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "common/deadline.h"
#include "common/net/socket.h"

namespace {

using hostccl::Deadline;
using hostccl::net::Fd;
using hostccl::net::OnRefused;

// A loopback port nothing listens on: one that was bound and listened on, then closed.
uint16_t closedPort() {
    std::string why;
    Fd listener = hostccl::net::listenTcp("127.0.0.1", 0, &why);
    EXPECT_TRUE(listener.valid()) << why;
    return hostccl::net::boundPort(listener.get());
}

double secondsSince(std::chrono::steady_clock::time_point t) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count();
}

TEST(SocketConnect, RefusedIsFinalWhenAskedSo) {
    const uint16_t port = closedPort();
    std::string err;
    const auto began = std::chrono::steady_clock::now();
    Fd fd = hostccl::net::connectTcp({"127.0.0.1", port}, Deadline::after(std::chrono::seconds(20)), &err,
                                     OnRefused::Fail);
    EXPECT_FALSE(fd.valid());
    EXPECT_NE(err.find("refused"), std::string::npos) << err;
    EXPECT_LT(secondsSince(began), 10.0) << "gave up only at the deadline";
}

TEST(SocketConnect, RefusedIsRetriedUntilTheListenerComesUp) {
    const uint16_t port = closedPort();  // refused until it listens again below
    std::string why;
    Fd listener;
    std::thread later([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        listener = hostccl::net::listenTcp("127.0.0.1", port, &why);
    });
    std::string err;
    Fd fd = hostccl::net::connectTcp({"127.0.0.1", port}, Deadline::after(std::chrono::seconds(20)), &err);
    later.join();
    ASSERT_TRUE(listener.valid()) << "the port was taken meanwhile: " << why;
    EXPECT_TRUE(fd.valid()) << err;
}

}  // namespace
