// The process-wide listener's handling of failure notices (core/net/acceptor.h). A
// notice can reach a rank before that rank has started its health session: it got
// the peer table late and is still creating its communicator while another rank,
// which failed to create, tells everyone. Dropping that notice left the late rank to
// wait out HCCL_CONNECT_TIMEOUT; it must be handed over when the session starts.
// A notice for a session that has ended is still turned away at once, so that its
// sender covers that rank's part of the broadcast without waiting.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>

#include "common/deadline.h"
#include "common/siphash.h"
#include "core/net/acceptor.h"
#include "core/net/handshake.h"
#include "core/net/socket.h"

namespace hostccl::acceptor_test {

// Opens a notice connection to this process's listener and sends its Hello and `body`.
net::Fd sendNotice(uint64_t commId, uint32_t toRank, const std::string& body) {
    std::string err;
    net::Fd fd = net::connectTcp({"127.0.0.1", net::Acceptor::instance().port()}, Deadline::afterSeconds(10), &err);
    EXPECT_TRUE(fd.valid()) << err;
    const net::Hello hello = net::makeHello(net::Purpose::Notice, commId, 0, toRank);
    EXPECT_TRUE(net::sendAll(fd.get(), &hello, sizeof hello, Deadline::afterSeconds(10), &err)) << err;
    EXPECT_TRUE(net::sendAll(fd.get(), body.data(), body.size(), Deadline::afterSeconds(10), &err)) << err;
    return fd;
}

TEST(AcceptorNotices, ANoticeBeforeItsSessionIsHandedOverWhenTheSessionStarts) {
    ASSERT_TRUE(net::Acceptor::instance().ok()) << net::Acceptor::instance().startError();
    const uint64_t commId = randomU64();
    const std::string body = "rank 0 could not create";
    net::Fd early = sendNotice(commId, 3, body);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // filed before the session exists

    std::promise<std::string> got;
    const uint64_t ticket = net::Acceptor::instance().serve(
        commId, 3, net::Purpose::Notice, [&](net::Fd fd, const net::Hello& hello) {
            std::string text(body.size(), '\0');
            std::string err;
            if (!net::recvAll(fd.get(), text.data(), text.size(), Deadline::afterSeconds(10), &err)) text = err;
            got.set_value(std::to_string(hello.fromRank) + ": " + text);
        });
    std::future<std::string> handed = got.get_future();
    const bool arrived = handed.wait_for(std::chrono::seconds(10)) == std::future_status::ready;
    net::Acceptor::instance().unserve(ticket);
    ASSERT_TRUE(arrived) << "the early notice was dropped";
    EXPECT_EQ(handed.get(), "0: " + body);
}

TEST(AcceptorNotices, ANoticeAfterItsSessionEndedIsTurnedAwayAtOnce) {
    ASSERT_TRUE(net::Acceptor::instance().ok()) << net::Acceptor::instance().startError();
    const uint64_t commId = randomU64();
    bool handled = false;
    const uint64_t ticket =
        net::Acceptor::instance().serve(commId, 4, net::Purpose::Notice, [&](net::Fd, const net::Hello&) {
            handled = true;
        });
    net::Acceptor::instance().unserve(ticket);

    const auto sent = std::chrono::steady_clock::now();
    net::Fd late = sendNotice(commId, 4, "late");
    char answer = 0;
    std::string err;
    EXPECT_FALSE(net::recvAll(late.get(), &answer, 1, Deadline::afterSeconds(30), &err))
        << "a notice for an ended session was answered";
    EXPECT_LT(std::chrono::duration<double>(std::chrono::steady_clock::now() - sent).count(), 5.0)
        << "the listener kept the notice instead of closing it: " << err;
    EXPECT_FALSE(handled);
}

}  // namespace hostccl::acceptor_test
