// Failure notices that reach a rank before its health session has started: it got
// the peer table late and is still creating its communicator while another rank,
// which failed to create, tells everyone. Dropping that notice left the late rank to
// wait out HCCL_CONNECT_TIMEOUT; it must be handed over when the session starts,
// whether it came over the listener (core/net/acceptor.h: another process) or from
// a rank of this process (health_monitor.h). A notice for a session that has ended
// is still turned away at once, so that its sender covers that rank's part of the
// broadcast without waiting.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/comm_failure.h"
#include "common/deadline.h"
#include "common/siphash.h"
#include "core/health/health_session.h"
#include "core/health/notice_broadcast.h"
#include "core/net/acceptor.h"
#include "core/net/handshake.h"
#include "common/net/socket.h"

namespace hostccl::early_notice_test {

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
    std::atomic<bool> handled{false};
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

// Two ranks of this process; rank 0 fails to create and spreads its notice while
// rank 1 has no session (not started yet, or ended when `endedFirst`). Returns
// whether rank 1's session, started afterwards, learns of the failure.
bool rank1HearsOfRank0sFailure(bool endedFirst) {
    auto peers = std::make_shared<std::vector<PeerInfo>>(2);
    for (uint32_t r = 0; r < 2; ++r) {
        (*peers)[r].rank = r;
        (*peers)[r].pid = 4242;
        (*peers)[r].hostId = "early-notice-test";
    }
    health::Membership m{"early_notice_test", randomU64(), randomSecret(), 0, peers};
    auto rank1 = [&] {
        health::Membership m1 = m;
        m1.rank = 1;
        return m1;
    };
    if (endedFirst) {
        CommFailure unused;
        health::HealthSession ended(rank1(), &unused);
        ended.start();
        ended.close();
    }
    health::Frame notice;
    notice.type = health::FrameType::Failure;
    notice.code = HCCL_E_ROCE_CONNECT;
    notice.culprit = 0;
    notice.origin = 0;
    notice.text = "rank 0 could not create the communicator";
    auto spreads = std::make_shared<health::SpreadsInFlight>();
    health::spreadNotice(std::make_shared<const health::Membership>(m), notice, spreads);
    spreads->drain(std::chrono::seconds(10));

    CommFailure failure;
    health::HealthSession late(rank1(), &failure);
    late.start();
    const bool heard = failure.waitFailed(std::chrono::milliseconds(endedFirst ? 300 : 10000));
    if (heard) {
        EXPECT_EQ(failure.code(), HCCL_E_ROCE_CONNECT);
        EXPECT_NE(failure.record().text.find("rank 0 could not create the communicator"), std::string::npos)
            << failure.record().text;
    }
    late.close();
    return heard;
}

TEST(InProcessNotices, ANoticeBeforeItsSessionIsTakenWhenTheSessionStarts) {
    EXPECT_TRUE(rank1HearsOfRank0sFailure(false)) << "the notice for a rank still being created was dropped";
}

TEST(InProcessNotices, ANoticeAfterItsSessionEndedIsNotKept) {
    // A later session of the same rank is not the one the notice was for.
    EXPECT_FALSE(rank1HearsOfRank0sFailure(true));
}

}  // namespace hostccl::early_notice_test
