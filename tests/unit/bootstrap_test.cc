// Root-info blobs, SipHash and the secret handshake.
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <cstring>
#include <thread>

#include "core/bootstrap/rendezvous_wire.h"
#include "core/bootstrap/peer_info.h"
#include "core/bootstrap/root_info.h"
#include "core/net/handshake.h"
#include "common/net/socket.h"

using namespace hostccl;

// Hosts emulated on one machine share its kernel and cores: the machine is the
// identity's boot id, whatever the network namespace or hostname (the comparison's
// namespace hosts each set their own); a forced identity (HOSTCCL_HOST_ID) of
// another shape is taken as it is.
TEST(HostIdentity, TheMachineIsTheKernelsBootIdWhateverTheNamespaceOrHostname) {
    EXPECT_EQ(machineOf("node7/5d1c-boot/net:[4026531840]"), "5d1c-boot");
    EXPECT_EQ(machineOf("node7/5d1c-boot/net:[4026532301]"), machineOf("node7/5d1c-boot/net:[4026531840]"));
    EXPECT_EQ(machineOf("hostB/5d1c-boot/net:[1]"), machineOf("node7/5d1c-boot/net:[2]"));
    EXPECT_NE(machineOf("node7/5d1c-boot/net:[1]"), machineOf("node7/77aa-boot/net:[1]"));
    EXPECT_EQ(machineOf("rack1-node3"), "rack1-node3");
    EXPECT_EQ(machineOf("a/b"), "a/b");
    EXPECT_EQ(machineOf(""), "");
    const std::string mine = hostIdentity();
    const size_t first = mine.find('/'), last = mine.rfind('/');
    EXPECT_EQ(machineOf(mine), mine.substr(first + 1, last - first - 1));
}

TEST(SipHash, MatchesTheReferenceVector) {
    // Aumasson & Bernstein, appendix A: key 00..0f, message 00..0e.
    Secret key{0x0706050403020100ULL, 0x0f0e0d0c0b0a0908ULL};
    unsigned char msg[15];
    for (int i = 0; i < 15; ++i) msg[i] = static_cast<unsigned char>(i);
    EXPECT_EQ(siphash24(key, msg, sizeof msg), 0xa129ca6149be45e5ULL);
}

TEST(RootInfo, RoundTripsAndStartsWithTheIpString) {
    RootInfo in{"10.1.2.3", 40000, Secret{1, 2}, 0xabcdef};
    HcclRootInfo blob;
    encodeRootInfo(in, &blob);
    EXPECT_STREQ(blob.internal, "10.1.2.3");
    RootInfo out;
    std::string why;
    ASSERT_TRUE(decodeRootInfo(&blob, &out, &why)) << why;
    EXPECT_EQ(out.ip, in.ip);
    EXPECT_EQ(out.port, in.port);
    EXPECT_TRUE(out.secret == in.secret);
    EXPECT_EQ(out.bootstrapId, in.bootstrapId);
}

TEST(RootInfo, RejectsMalformedBlobs) {
    RootInfo in{"127.0.0.1", 40000, Secret{1, 2}, 7};
    HcclRootInfo good;
    encodeRootInfo(in, &good);
    RootInfo out;
    std::string why;
    HcclRootInfo b = good;
    std::memset(b.internal, 'x', 64);  // no NUL in the IP field
    EXPECT_FALSE(decodeRootInfo(&b, &out, &why));
    EXPECT_NE(why.find("NUL"), std::string::npos);
    b = good;
    std::strcpy(b.internal, "invalid");  // what HCCL Test broadcasts on failure
    EXPECT_FALSE(decodeRootInfo(&b, &out, &why));
    b = good;
    b.internal[64] ^= 0x55;  // magic
    EXPECT_FALSE(decodeRootInfo(&b, &out, &why));
    std::memset(&b, 0, sizeof b);
    EXPECT_FALSE(decodeRootInfo(&b, &out, &why));
}

namespace {
// Runs the server side on one end of a socket pair and the client on the other.
std::pair<bool, bool> handshake(const Secret& serverSecret, const Secret& clientSecret) {
    int sv[2];
    EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    net::Fd a(sv[0]), b(sv[1]);
    auto deadline = Deadline::after(std::chrono::milliseconds(2000));
    bool serverOk = false;
    std::thread server([&] {
        net::Hello hello{};
        std::string err;
        serverOk = net::readHello(a.get(), &hello, deadline, &err) &&
                   net::serverHandshake(a.get(), serverSecret, hello, deadline, &err);
        a.reset();  // a rejected client sees the close
    });
    std::string err;
    net::Hello hello = net::makeHello(net::Purpose::PeerLink, 42, 1, 0);
    bool clientOk = net::clientHandshake(b.get(), clientSecret, hello, deadline, &err);
    b.reset();  // a client that gave up closes its end, as the library does
    server.join();
    return {serverOk, clientOk};
}
}  // namespace

// The table's tree: every rank but 0 is the child of exactly its parent, and the
// depth is log8 n, so 1024 ranks are reached in 4 hops.
TEST(RendezvousTree, EveryRankHasOneParentAndTheDepthIsLogarithmic) {
    using namespace hostccl::bootstrap;
    for (uint32_t n : {1u, 2u, 7u, 8u, 9u, 63u, 64u, 65u, 100u, 1024u, 4097u}) {
        std::vector<int> parents(n, 0);
        std::vector<uint32_t> depth(n, 0);
        for (uint32_t r = 0; r < n; ++r)
            for (uint32_t c : treeChildren(r, n)) {
                ASSERT_LT(c, n);
                ASSERT_EQ(treeParent(c), r) << "n " << n << " child " << c;
                ++parents[c];
                depth[c] = depth[r] + 1;  // parents are below their children
                ASSERT_GT(c, r);
            }
        for (uint32_t r = 1; r < n; ++r) EXPECT_EQ(parents[r], 1) << "n " << n << " rank " << r;
        uint32_t deepest = 0, bound = 0;
        for (uint32_t d : depth) deepest = std::max(deepest, d);
        for (uint64_t span = 1; span < n; span *= 8) ++bound;
        EXPECT_LE(deepest, bound) << "n " << n;
    }
    EXPECT_EQ(treeParent(8 * 3 + 5), 8u * 3);
    EXPECT_EQ(treeParent(64 * 2), 0u);
}

TEST(Handshake, AcceptsTheSecretAndRejectsAnyOther) {
    Secret s = randomSecret();
    EXPECT_EQ(handshake(s, s), std::make_pair(true, true));
    Secret other = s;
    other.k1 ^= 1;
    auto [serverOk, clientOk] = handshake(s, other);
    EXPECT_FALSE(serverOk);
    EXPECT_FALSE(clientOk);
}

// A server whose first `turnAway` connections are closed at the door (its handshake
// slots taken), then proves `serverSecret` to the next one. Returns what the client
// dialling it got, and how many connections the server saw.
std::pair<bool, int> dialAServerThatTurnsAway(int turnAway, const Secret& serverSecret, const Secret& clientSecret) {
    std::string err;
    net::Fd listener = net::listenTcp("127.0.0.1", 0, &err);
    EXPECT_TRUE(listener.valid()) << err;
    const auto deadline = Deadline::after(std::chrono::milliseconds(5000));
    int seen = 0;
    std::thread server([&] {
        for (;; ++seen) {
            std::string why;
            net::Fd fd = net::acceptTcp(listener.get(), deadline, &why);
            if (!fd.valid()) return;
            if (seen < turnAway) continue;  // closed unread: the client sees a reset or EOF
            net::Hello hello{};
            net::readHello(fd.get(), &hello, deadline, &why) && net::serverHandshake(fd.get(), serverSecret, hello, deadline, &why);
            ++seen;
            return;
        }
    });
    const net::Hello hello = net::makeHello(net::Purpose::PeerLink, 42, 1, 0);
    net::Fd fd = net::dialProven(net::Endpoint{"127.0.0.1", net::boundPort(listener.get())}, clientSecret, hello, deadline, &err);
    const bool ok = fd.valid();
    fd.reset();
    server.join();
    return {ok, seen};
}

TEST(Handshake, ADialTurnedAwayAtTheDoorTriesAgainButAWrongProofIsFinal) {
    const Secret s = randomSecret();
    EXPECT_EQ(dialAServerThatTurnsAway(3, s, s), std::make_pair(true, 4));
    Secret other = s;
    other.k0 ^= 1;
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(dialAServerThatTurnsAway(0, s, other), std::make_pair(false, 1));  // one try, not until the deadline
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(2));
}

TEST(SocketIfname, FollowsHcclGrammar) {
    EXPECT_TRUE(net::interfaceAdmitted("", "eth0"));
    EXPECT_TRUE(net::interfaceAdmitted("eth,enp", "enp3s0"));
    EXPECT_FALSE(net::interfaceAdmitted("eth,enp", "lo"));
    EXPECT_FALSE(net::interfaceAdmitted("^eth", "eth1"));
    EXPECT_TRUE(net::interfaceAdmitted("^eth", "lo"));
    EXPECT_TRUE(net::interfaceAdmitted("=eth0", "eth0"));
    EXPECT_FALSE(net::interfaceAdmitted("=eth0", "eth01"));
    EXPECT_FALSE(net::interfaceAdmitted("^=eth0", "eth0"));
    EXPECT_TRUE(net::interfaceAdmitted("^=eth0", "eth01"));
}
