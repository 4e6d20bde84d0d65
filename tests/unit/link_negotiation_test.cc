// How the two ends of a pair agree on a transport (transports/link_negotiation.h):
// the table's first wanted row both can use, a declined offer moving both to the
// next row, HOSTCCL_TRANSPORT forcing one row (and failing both ends at once when
// it cannot be had), and bad input on the wire or in the variable refused.
#include <gtest/gtest.h>
#include <dirent.h>

#include <chrono>
#include <cstring>
#include <future>

#include "tests/support/loopback.h"
#include "tests/support/scoped_env.h"
#include "transports/link_negotiation.h"
#include "transports/transport_table.h"

using hostccl::Deadline;
using hostccl::ErrorSite;
using hostccl::LinkClass;
using hostccl::net::Fd;
using hostccl::test::ScopedEnv;
using hostccl::transport::Link;
using hostccl::transport::PairEnds;

namespace {

PairEnds endsOf(uint32_t self, uint32_t peer, bool sameHost) {
    PairEnds e;
    e.selfRank = self;
    e.peerRank = peer;
    e.selfIp = e.peerIp = "127.0.0.1";
    e.selfPid = e.peerPid = static_cast<uint32_t>(getpid());
    e.sameHost = sameHost;
    e.commId = 0x6e60;
    e.commSize = 2;
    return e;
}

struct Outcome {
    HcclResult rc = HCCL_E_RESERVED;
    std::unique_ptr<Link> link;
};

Deadline soon() { return Deadline::after(std::chrono::seconds(10)); }

Outcome negotiate(const PairEnds& ends, Fd fd) {
    Outcome o;
    ErrorSite site;
    site.rank = ends.selfRank;
    site.peer = ends.peerRank;
    o.rc = hostccl::transport::negotiateLink(ends, std::move(fd), soon(), site, &o.link);
    return o;
}

// Both ends of one pair at once: rank 0 offers, rank 1 answers.
std::pair<Outcome, Outcome> negotiatePair(bool sameHost) {
    Fd up, down;
    hostccl::test::loopbackConnection(soon(), &up, &down);
    auto answer = std::async(std::launch::async, [&] { return negotiate(endsOf(1, 0, sameHost), std::move(down)); });
    Outcome offered = negotiate(endsOf(0, 1, sameHost), std::move(up));
    return {std::move(offered), answer.get()};
}

bool machineHasRdmaDevice() {
    DIR* devices = opendir("/sys/class/infiniband");
    bool any = false;
    if (devices != nullptr) {
        while (dirent* d = readdir(devices)) any |= d->d_name[0] != '.';
        closedir(devices);
    }
    return any;
}

// One offer as the wire carries it (64 bytes: tag, NUL-terminated payload).
void sendOffer(int fd, char tag, const char* payload) {
    char offer[64] = {};
    offer[0] = tag;
    std::strncpy(offer + 1, payload, sizeof offer - 2);
    std::string err;
    ASSERT_TRUE(hostccl::net::sendAll(fd, offer, sizeof offer, soon(), &err)) << err;
}

char answerTo(int fd) {
    char reply = 0;
    std::string err;
    EXPECT_TRUE(hostccl::net::recvAll(fd, &reply, 1, soon(), &err)) << err;
    return reply;
}

}  // namespace

TEST(LinkNegotiation, RanksOfOneHostAgreeOnSharedMemory) {
    ScopedEnv autoTransport("HOSTCCL_TRANSPORT", "auto");
    auto [offered, answered] = negotiatePair(true);
    ASSERT_EQ(offered.rc, HCCL_SUCCESS);
    ASSERT_EQ(answered.rc, HCCL_SUCCESS);
    EXPECT_EQ(offered.link->linkClass(), LinkClass::Shm);
    EXPECT_EQ(answered.link->linkClass(), LinkClass::Shm);
}

TEST(LinkNegotiation, RanksOfTwoHostsWithoutRdmaAgreeOnTcp) {
    if (machineHasRdmaDevice()) GTEST_SKIP() << "this machine has an RDMA device: the pair would agree on RDMA";
    ScopedEnv autoTransport("HOSTCCL_TRANSPORT", "auto");
    auto [offered, answered] = negotiatePair(false);
    ASSERT_EQ(offered.rc, HCCL_SUCCESS);
    ASSERT_EQ(answered.rc, HCCL_SUCCESS);
    EXPECT_EQ(offered.link->linkClass(), LinkClass::Tcp);
    EXPECT_EQ(answered.link->linkClass(), LinkClass::Tcp);
}

TEST(LinkNegotiation, ForcedTcpLinksRanksOfOneHostByTcp) {
    ScopedEnv tcp("HOSTCCL_TRANSPORT", "tcp");
    auto [offered, answered] = negotiatePair(true);
    ASSERT_EQ(offered.rc, HCCL_SUCCESS);
    ASSERT_EQ(answered.rc, HCCL_SUCCESS);
    EXPECT_EQ(offered.link->linkClass(), LinkClass::Tcp);
    EXPECT_EQ(answered.link->linkClass(), LinkClass::Tcp);
    EXPECT_FALSE(hostccl::transport::linksInProcess([] {
        PairEnds e = endsOf(0, 1, true);
        e.sameProcess = true;
        return e;
    }()));
}

TEST(LinkNegotiation, AForcedTransportThatCannotBeHadFailsBothEndsAtOnce) {
    ScopedEnv shm("HOSTCCL_TRANSPORT", "shm");  // shared memory between two hosts
    const auto start = std::chrono::steady_clock::now();
    auto [offered, answered] = negotiatePair(false);
    EXPECT_EQ(offered.rc, HCCL_E_UNAVAIL);
    EXPECT_EQ(answered.rc, HCCL_E_UNAVAIL) << "the answering end learns it from the give-up offer";
    EXPECT_EQ(offered.link, nullptr);
    EXPECT_EQ(answered.link, nullptr);
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2)) << "no end waited for a timeout";
}

TEST(LinkNegotiation, AValueNamingNoTransportIsRefusedByBothEnds) {
    ScopedEnv bogus("HOSTCCL_TRANSPORT", "infiniband");
    std::string why;
    const hostccl::transport::TransportEntry* forced = nullptr;
    EXPECT_FALSE(hostccl::transport::forcedTransport(&forced, &why));
    EXPECT_EQ(why, "HOSTCCL_TRANSPORT=infiniband names no transport (auto, rdma, shm, tcp)");
    auto [offered, answered] = negotiatePair(true);
    EXPECT_EQ(offered.rc, HCCL_E_PARA);
    EXPECT_EQ(answered.rc, HCCL_E_PARA);
    EXPECT_EQ(offered.link, nullptr);
    EXPECT_EQ(answered.link, nullptr);
}

// The offering end as raw bytes: shared memory that cannot be mapped is declined,
// and the next row's offer (TCP) is taken on the same connection.
TEST(LinkNegotiation, ADeclinedOfferMovesBothEndsToTheNextTransport) {
    ScopedEnv autoTransport("HOSTCCL_TRANSPORT", "auto");
    Fd up, down;
    hostccl::test::loopbackConnection(soon(), &up, &down);
    auto answer = std::async(std::launch::async, [&] { return negotiate(endsOf(1, 0, true), std::move(down)); });
    sendOffer(up.get(), 'S', "/hostccl-no-such-segment");
    EXPECT_EQ(answerTo(up.get()), 'F');
    sendOffer(up.get(), 'T', "");
    EXPECT_EQ(answerTo(up.get()), 'A');
    up = Fd();  // gone before the lane handshake: the answering end fails, it does not hang
    Outcome answered = answer.get();
    EXPECT_EQ(answered.rc, HCCL_E_TCP_CONNECT);
    EXPECT_EQ(answered.link, nullptr);
}

TEST(LinkNegotiation, AnOfferOfNoTransportIsRefused) {
    ScopedEnv autoTransport("HOSTCCL_TRANSPORT", "auto");
    for (const char* bad : {"Z", "S"}) {  // an unknown tag; a payload without its NUL
        SCOPED_TRACE(bad);
        Fd up, down;
        hostccl::test::loopbackConnection(soon(), &up, &down);
        auto answer = std::async(std::launch::async, [&] { return negotiate(endsOf(1, 0, true), std::move(down)); });
        char offer[64];
        std::memset(offer, 'x', sizeof offer);
        offer[0] = bad[0];
        if (bad[0] == 'Z') offer[1] = '\0';
        std::string err;
        ASSERT_TRUE(hostccl::net::sendAll(up.get(), offer, sizeof offer, soon(), &err)) << err;
        Outcome answered = answer.get();
        EXPECT_EQ(answered.rc, HCCL_E_TCP_CONNECT);
        EXPECT_EQ(answered.link, nullptr);
    }
}

TEST(LinkNegotiation, TwoThreadsOfOneProcessShareMemoryWithoutAConnection) {
    ScopedEnv autoTransport("HOSTCCL_TRANSPORT", "auto");
    PairEnds e = endsOf(0, 1, true);
    e.sameProcess = true;
    ASSERT_TRUE(hostccl::transport::linksInProcess(e));
    std::unique_ptr<Link> mine, theirs;
    std::string why;
    ASSERT_TRUE(hostccl::transport::makeInProcessLinks(e, &mine, &theirs, &why)) << why;
    EXPECT_EQ(mine->linkClass(), LinkClass::Shm);
    EXPECT_EQ(theirs->linkClass(), LinkClass::Shm);
    EXPECT_EQ(&hostccl::transport::firstChoice(endsOf(0, 1, false)), hostccl::transport::transportTable().front())
        << "between hosts RDMA is tried first";
}
