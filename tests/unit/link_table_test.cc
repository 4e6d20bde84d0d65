// Links opened on demand (core/links/link_table.h) when both ranks of a pair dial
// at once. The case that stalled a barrier: the lower rank is mid-dial when the
// higher rank's own connection arrives and wins; the higher rank then finishes its
// op and destroys its communicator before its listener answers the lower rank's
// dial. The lower rank must take the link that won within its dial's grace (a
// second), not wait out the connect timeout for an answer that never comes.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <future>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "common/comm_failure.h"
#include "common/error.h"
#include "core/links/link_table.h"
#include "core/net/acceptor.h"
#include "common/net/socket.h"
#include "tests/support/scoped_env.h"
#include "transports/link.h"

// (A named namespace: the sanitizer builds compile the unit tests as one unity file.)
namespace hostccl::link_table_test {

constexpr uint64_t kTableCommId = 0x11a7ab1e5eed;

PeerInfo peerAt(uint32_t rank, uint16_t port) {
    PeerInfo p;
    p.rank = rank;
    p.ip = "127.0.0.1";
    p.port = port;
    p.pid = static_cast<uint32_t>(getpid());
    p.hostId = "link-table-test";
    return p;
}

LinkTable::Identity identity(uint32_t rank, const Secret& secret) {
    LinkTable::Identity id;
    id.commId = kTableCommId;
    id.secret = secret;
    id.rank = rank;
    id.comm = "link_table_test";
    return id;
}

// Moves one message over the pair's two ends; true when it arrived intact.
bool carries(transport::Link* from, transport::Link* to) {
    uint64_t sent = 0x5eed0f11a7ull, got = 0;
    transport::Transfer s, r;
    s.dir = transport::Transfer::Dir::Send;
    s.link = from;
    s.src = &sent;
    s.bytes = sizeof sent;
    r.dir = transport::Transfer::Dir::Recv;
    r.link = to;
    r.dst = &got;
    r.bytes = sizeof got;
    from->post(&s);
    to->post(&r);
    const Deadline deadline = Deadline::afterSeconds(20);
    while (!(s.complete && r.complete) && s.error == HCCL_SUCCESS && r.error == HCCL_SUCCESS && !deadline.expired()) {
        from->progress();
        to->progress();
    }
    return r.complete && got == sent;
}

TEST(LinkTable, DialStopsWhenThePeersConnectionWins) {
    test::ScopedEnv tcp("HOSTCCL_TRANSPORT", "tcp");  // ranks of one process pair over sockets, not memory
    ASSERT_TRUE(net::Acceptor::instance().ok());
    const uint16_t acceptorPort = net::Acceptor::instance().port();
    // Rank 1's listener as rank 0 sees it: it takes the connection and never answers,
    // as a process whose communicator is already gone holds an unclaimed dial.
    std::string err;
    net::Fd silent = net::listenTcp("127.0.0.1", 0, &err);
    ASSERT_TRUE(silent.valid()) << err;
    const std::vector<PeerInfo> seenByRank0{peerAt(0, acceptorPort), peerAt(1, net::boundPort(silent.get()))};
    const std::vector<PeerInfo> seenByRank1{peerAt(0, acceptorPort), peerAt(1, acceptorPort)};
    const Secret secret = randomSecret();
    auto name = [](uint32_t r) { return "rank " + std::to_string(r); };
    CommFailure failure0, failure1;
    LinkTable rank0(identity(0, secret), seenByRank0, name, &failure0);
    LinkTable rank1(identity(1, secret), seenByRank1, name, &failure1);
    rank0.open();  // rank 1 never serves: its dial is the only way the pair connects

    const auto start = std::chrono::steady_clock::now();
    const Deadline opDeadline = Deadline::afterSeconds(60);
    auto rank0Gets = std::async(std::launch::async, [&] {
        HcclResult code = HCCL_SUCCESS;
        std::string why;
        transport::Link* l = rank0.get(1, opDeadline, &code, &why);
        return std::make_pair(l, why);
    });
    net::Fd held = net::acceptTcp(silent.get(), Deadline::afterSeconds(20), &err);
    ASSERT_TRUE(held.valid()) << "rank 0 never dialed: " << err;  // rank 0 is now mid-dial

    HcclResult code = HCCL_SUCCESS;
    std::string why;
    transport::Link* at1 = rank1.get(0, opDeadline, &code, &why);
    ASSERT_NE(at1, nullptr) << resultName(code) << ": " << why;

    ASSERT_EQ(rank0Gets.wait_for(std::chrono::seconds(20)), std::future_status::ready)
        << "rank 0 kept dialing a peer whose own connection had won";
    auto [at0, why0] = rank0Gets.get();
    ASSERT_NE(at0, nullptr) << why0;
    EXPECT_EQ(rank0.existing(1), at0);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(20));
    EXPECT_TRUE(carries(at1, at0)) << "both ranks must hold the same connection";
    EXPECT_TRUE(carries(at0, at1));
}

// Rank 0 dials rank 1 at `port` until its communicator fails (another rank could
// not create it, say); the dial must end at once with that failure, not run on to
// HCCL_CONNECT_TIMEOUT. Returns how long get() took after the failure.
double secondsToGiveUpAfterFailure(uint16_t port, bool waitForTheDial, net::Fd* listener) {
    test::ScopedEnv tcp("HOSTCCL_TRANSPORT", "tcp");
    test::ScopedEnv timeout("HCCL_CONNECT_TIMEOUT", "60");
    const std::vector<PeerInfo> seenByRank0{peerAt(0, net::Acceptor::instance().port()), peerAt(1, port)};
    CommFailure failure;
    LinkTable rank0(identity(0, randomSecret()), seenByRank0, [](uint32_t r) { return "rank " + std::to_string(r); },
                    &failure);
    rank0.open();
    auto gets = std::async(std::launch::async, [&] {
        HcclResult code = HCCL_SUCCESS;
        std::string why;
        transport::Link* l = rank0.get(1, Deadline::afterSeconds(60), &code, &why);
        return std::make_tuple(l, code, why);
    });
    net::Fd held;
    std::string err;
    if (waitForTheDial) {
        held = net::acceptTcp(listener->get(), Deadline::afterSeconds(20), &err);
        EXPECT_TRUE(held.valid()) << "rank 0 never dialed: " << err;
    } else {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));  // several refused attempts
    }
    const auto raised = std::chrono::steady_clock::now();
    failure.raise(HCCL_E_ROCE_CONNECT, 2, "rank 2 could not create the communicator");
    if (gets.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
        ADD_FAILURE() << "the dial outlived its communicator's failure by 20 s";
        gets.wait();
    }
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - raised).count();
    auto [link, code, why] = gets.get();
    EXPECT_EQ(link, nullptr);
    EXPECT_EQ(code, HCCL_E_ROCE_CONNECT) << why;
    EXPECT_EQ(why, "rank 2 could not create the communicator");
    return took;
}

TEST(LinkTable, DialEndsWhenTheCommunicatorFailsMidHandshake) {
    // A peer whose communicator is gone holds the dial unanswered.
    std::string err;
    net::Fd silent = net::listenTcp("127.0.0.1", 0, &err);
    ASSERT_TRUE(silent.valid()) << err;
    EXPECT_LT(secondsToGiveUpAfterFailure(net::boundPort(silent.get()), true, &silent), 1.0);
}

TEST(LinkTable, DialEndsWhenTheCommunicatorFailsWhileRefused) {
    // A peer whose process is gone refuses; the dial retries until it is told to stop.
    std::string err;
    net::Fd gone = net::listenTcp("127.0.0.1", 0, &err);
    ASSERT_TRUE(gone.valid()) << err;
    const uint16_t port = net::boundPort(gone.get());
    gone = net::Fd();
    EXPECT_LT(secondsToGiveUpAfterFailure(port, false, nullptr), 1.0);
}

}  // namespace hostccl::link_table_test
