// Hostile input: strangers that scan the ports, send garbage, stop half way through
// a hello, dribble bytes, or forge a hello without the secret, during init and
// during ops; a job still forms, computes exact results and stays healthy. The
// whitelist admits only the listed hosts. A frame longer than what was posted is
// refused before a byte of it lands.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <fstream>
#include <random>
#include <thread>
#include <vector>

#include "core/bootstrap/root_info.h"
#include "core/comm.h"
#include "core/net/acceptor.h"
#include "core/net/handshake.h"
#include "common/net/socket.h"
#include "core/net/whitelist.h"
#include "tests/support/world.h"
#include "transports/link.h"

using namespace hostccl;
using namespace hostccl::test;

namespace {

// A TCP connection to 127.0.0.1:port, from `source` (another loopback address) if given.
int dial(uint16_t port, const char* source = nullptr) {
    int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (source != nullptr) {
        sockaddr_in src{};
        src.sin_family = AF_INET;
        inet_pton(AF_INET, source, &src.sin_addr);
        ::bind(fd, reinterpret_cast<sockaddr*>(&src), sizeof src);
    }
    sockaddr_in to{};
    to.sin_family = AF_INET;
    to.sin_port = htons(port);
    inet_pton(AF_INET, "127.0.0.1", &to.sin_addr);
    if (::connect(fd, reinterpret_cast<sockaddr*>(&to), sizeof to) != 0) {
        ::close(fd);
        return -1;
    }
    return fd;
}

// Every kind of stranger, against one port, until `stop`. Counts what it tried.
class Attackers {
public:
    Attackers(uint16_t port, uint64_t commId) : port_(port), commId_(commId) {}
    ~Attackers() { stop(); }
    void start() {
        threads_.emplace_back([this] { scan(); });
        threads_.emplace_back([this] { garbage(); });
        threads_.emplace_back([this] { halfOpenAndSlow(); });
        threads_.emplace_back([this] { forged(); });
    }
    void stop() {
        stop_ = true;
        for (auto& t : threads_) t.join();
        threads_.clear();
        for (int fd : held_) ::close(fd);
        held_.clear();
    }
    uint64_t tried() const { return tried_; }

private:
    void scan() {  // connect and close at once, as a port scanner does
        while (!stop_) {
            int fd = dial(port_);
            if (fd >= 0) ::close(fd);
            ++tried_;
            std::this_thread::sleep_for(std::chrono::milliseconds(2));
        }
    }
    void garbage() {
        std::mt19937 rng(7);
        std::vector<char> junk(4096);
        while (!stop_) {
            for (char& c : junk) c = static_cast<char>(rng());
            int fd = dial(port_);
            if (fd >= 0) {
                (void)!::send(fd, junk.data(), junk.size(), MSG_NOSIGNAL);
                ::close(fd);
            }
            ++tried_;
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
    }
    // Half a hello then silence (held open to the end), and one byte every 50 ms.
    void halfOpenAndSlow() {
        net::Hello h = net::makeHello(net::Purpose::PeerLink, commId_, 1, 0);
        const char* bytes = reinterpret_cast<const char*>(&h);
        for (int i = 0; i < 8 && !stop_; ++i) {
            int fd = dial(port_);
            if (fd < 0) continue;
            (void)!::send(fd, bytes, sizeof h / 2, MSG_NOSIGNAL);
            held_.push_back(fd);
            ++tried_;
        }
        int slow = dial(port_);
        ++tried_;
        for (size_t i = 0; !stop_; i = (i + 1) % sizeof h) {
            if (slow >= 0) (void)!::send(slow, bytes + i, 1, MSG_NOSIGNAL);
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        if (slow >= 0) ::close(slow);
    }
    // Well-formed hellos for the real communicator, then a made-up proof.
    void forged() {
        for (uint32_t n = 0; !stop_; ++n) {
            int fd = dial(port_);
            if (fd >= 0) {
                net::Hello h = net::makeHello(n % 2 ? net::Purpose::Health : net::Purpose::PeerLink, commId_, n % 3, 0);
                (void)!::send(fd, &h, sizeof h, MSG_NOSIGNAL);
                uint64_t fake[2] = {n, ~uint64_t(n)};
                (void)!::send(fd, fake, sizeof fake, MSG_NOSIGNAL);
                ::close(fd);
            }
            ++tried_;
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        }
    }

    const uint16_t port_;
    const uint64_t commId_;
    std::atomic<bool> stop_{false};
    std::atomic<uint64_t> tried_{0};
    std::vector<std::thread> threads_;
    std::vector<int> held_;
};

int exactAllReduces(const World& w, uint32_t r, int rounds) {
    std::vector<int32_t> v(1024);
    for (int i = 0; i < rounds; ++i) {
        for (size_t k = 0; k < v.size(); ++k) v[k] = int32_t(r + 1) * int32_t(k + i);
        int rc = HcclAllReduce(v.data(), v.data(), v.size(), HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, w.comm(r), w.stream(r));
        if (rc == 0) rc = aclrtSynchronizeStream(w.stream(r));
        if (rc != 0) return rc;
        const int32_t n = int32_t(w.size());
        for (size_t k = 0; k < v.size(); ++k)
            if (v[k] != n * (n + 1) / 2 * int32_t(k + i)) return 1000 + i;
    }
    return 0;
}

TEST(HostileInput, StrangersDuringOpsChangeNothing) {
    World w(3);
    ASSERT_TRUE(w.ok());
    Attackers attack(net::Acceptor::instance().port(), static_cast<Comm*>(w.comm(0))->id());
    attack.start();
    std::this_thread::sleep_for(std::chrono::milliseconds(500));  // half-open and slow ones in place
    auto rcs = w.run([&](uint32_t r) { return exactAllReduces(w, r, 5000); });
    attack.stop();
    std::printf("during ops: %llu hostile connections tried\n", static_cast<unsigned long long>(attack.tried()));
    EXPECT_EQ(rcs, std::vector<int>(3, 0));
    EXPECT_GT(attack.tried(), 50u);
    for (uint32_t r = 0; r < 3; ++r) {
        HcclResult async = HCCL_E_INTERNAL;
        EXPECT_EQ(HcclGetCommAsyncError(w.comm(r), &async), HCCL_SUCCESS);
        EXPECT_EQ(async, HCCL_SUCCESS) << "rank " << r;
    }
}

// The same strangers at the rendezvous port and the peer listener while the ranks
// join (they start before any rank does), and an impostor that runs the whole join
// with a forged secret.
TEST(HostileInput, StrangersDuringInitChangeNothing) {
    HcclRootInfo root;
    ASSERT_EQ(HcclGetRootInfo(&root), HCCL_SUCCESS);
    RootInfo info;
    std::string why;
    ASSERT_TRUE(decodeRootInfo(&root, &info, &why));
    Attackers atRendezvous(info.port, info.bootstrapId), atListener(net::Acceptor::instance().port(), info.bootstrapId);
    atRendezvous.start();
    atListener.start();
    RootInfo forged = info;
    forged.secret.k0 ^= 0x1234;
    HcclRootInfo forgedBlob;
    encodeRootInfo(forged, &forgedBlob);
    std::thread impostor([&] {
        HcclComm c = nullptr;
        EXPECT_NE(HcclCommInitRootInfo(3, &forgedBlob, 1, &c), HCCL_SUCCESS);
        EXPECT_EQ(c, nullptr);
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    std::vector<HcclComm> comms(3, nullptr);
    std::vector<HcclResult> rcs(3);
    std::vector<std::thread> ranks;
    for (uint32_t r = 0; r < 3; ++r)
        ranks.emplace_back([&, r] {
            aclrtSetDevice(int32_t(r));
            rcs[r] = HcclCommInitRootInfo(3, &root, r, &comms[r]);
        });
    for (auto& t : ranks) t.join();
    impostor.join();
    atRendezvous.stop();
    atListener.stop();
    std::printf("during init: %llu hostile connections tried\n",
                static_cast<unsigned long long>(atRendezvous.tried() + atListener.tried()));
    for (uint32_t r = 0; r < 3; ++r) ASSERT_EQ(rcs[r], HCCL_SUCCESS) << "rank " << r;
    std::vector<int64_t> v{1, 2, 3};
    std::vector<std::vector<int64_t>> bufs(3, v);
    std::vector<aclrtStream> streams(3);
    std::vector<int> results(3);
    ranks.clear();
    for (uint32_t r = 0; r < 3; ++r)
        ranks.emplace_back([&, r] {
            aclrtSetDevice(int32_t(r));
            aclrtCreateStream(&streams[r]);
            HcclAllReduce(bufs[r].data(), bufs[r].data(), 3, HCCL_DATA_TYPE_INT64, HCCL_REDUCE_SUM, comms[r], streams[r]);
            results[r] = aclrtSynchronizeStream(streams[r]);
        });
    for (auto& t : ranks) t.join();
    for (uint32_t r = 0; r < 3; ++r) {
        EXPECT_EQ(results[r], 0);
        EXPECT_EQ(bufs[r], (std::vector<int64_t>{3, 6, 9}));
        HcclCommDestroy(comms[r]);
        aclrtDestroyStream(streams[r]);
    }
}

// Links open on demand (here over TCP between the thread ranks, through the
// process's listener) while strangers flood it: for each pair, Hellos naming the
// communicator and its ranks that never prove the secret and are held open (each
// keeps a handler busy until its bound), and forged proofs. The first ops, which open
// the links, still complete with exact results; nothing stays failed.
TEST(HostileInput, StrangersDuringOnDemandConnectsChangeNothing) {
    setenv("HOSTCCL_TRANSPORT", "tcp", 1);
    {
        World w(4);
        ASSERT_TRUE(w.ok());
        const uint64_t commId = static_cast<Comm*>(w.comm(0))->id();
        const uint16_t port = net::Acceptor::instance().port();
        std::vector<int> silent;
        for (int k = 0; k < 200; ++k) {  // before any link exists
            int fd = dial(port);
            if (fd < 0) continue;
            net::Hello h = net::makeHello(net::Purpose::PeerLink, commId, uint32_t(k % 4), uint32_t((k + 1) % 4));
            (void)!::send(fd, &h, sizeof h, MSG_NOSIGNAL);
            silent.push_back(fd);
        }
        Attackers attack(port, commId);
        attack.start();
        auto rcs = w.run([&](uint32_t r) { return exactAllReduces(w, r, 200); });
        attack.stop();
        for (int fd : silent) ::close(fd);
        std::printf("on-demand connects under %zu silent hellos and %llu other hostile connections\n", silent.size(),
                    static_cast<unsigned long long>(attack.tried()));
        EXPECT_EQ(rcs, std::vector<int>(4, 0));
        EXPECT_GE(silent.size(), 150u);
    }
    unsetenv("HOSTCCL_TRANSPORT");
}

// A rank that joins twice: the second claim of rank 1 is refused with a clear error
// and changes nothing; the job forms from the others and computes exact results.
TEST(HostileInput, ARankJoiningTwiceIsRefused) {
    HcclRootInfo root;
    ASSERT_EQ(HcclGetRootInfo(&root), HCCL_SUCCESS);
    std::vector<HcclComm> comms(4, nullptr);
    std::vector<HcclResult> rcs(4, HCCL_SUCCESS);
    const uint32_t rankOf[4] = {1, 1, 0, 2};  // two claims of rank 1 first
    std::vector<std::thread> joins;
    for (uint32_t i = 0; i < 4; ++i) {
        if (i == 2) std::this_thread::sleep_for(std::chrono::milliseconds(300));  // both rank-1 claims are in
        joins.emplace_back([&, i] {
            aclrtSetDevice(int32_t(i));
            rcs[i] = HcclCommInitRootInfo(3, &root, rankOf[i], &comms[i]);
        });
    }
    for (auto& t : joins) t.join();
    const int refused = (rcs[0] != HCCL_SUCCESS) + (rcs[1] != HCCL_SUCCESS);
    ASSERT_EQ(refused, 1) << "exactly one claim of rank 1 is refused";
    EXPECT_EQ(rcs[rcs[0] != HCCL_SUCCESS ? 0 : 1], HCCL_E_PARA);
    EXPECT_EQ(comms[rcs[0] != HCCL_SUCCESS ? 0 : 1], nullptr);
    ASSERT_EQ(rcs[2], HCCL_SUCCESS);
    ASSERT_EQ(rcs[3], HCCL_SUCCESS);
    std::vector<uint32_t> good = {rcs[0] == HCCL_SUCCESS ? 0u : 1u, 2u, 3u};
    std::vector<std::vector<int64_t>> bufs(3, std::vector<int64_t>{1, 2, 3});
    std::vector<int> results(3);
    std::vector<std::thread> ops;
    for (uint32_t k = 0; k < 3; ++k)
        ops.emplace_back([&, k] {
            aclrtSetDevice(int32_t(good[k]));
            aclrtStream stream;
            aclrtCreateStream(&stream);
            HcclAllReduce(bufs[k].data(), bufs[k].data(), 3, HCCL_DATA_TYPE_INT64, HCCL_REDUCE_SUM, comms[good[k]],
                          stream);
            results[k] = aclrtSynchronizeStream(stream);
            aclrtDestroyStream(stream);
        });
    for (auto& t : ops) t.join();
    for (uint32_t k = 0; k < 3; ++k) {
        EXPECT_EQ(results[k], 0);
        EXPECT_EQ(bufs[k], (std::vector<int64_t>{3, 6, 9}));
        HcclCommDestroy(comms[good[k]]);
    }
}

// A frame whose header announces more (or less) than the receiver posted is refused.
TEST(HostileInput, FrameLengthsAreCappedByWhatWasPosted) {
    transport::MsgTag tag;
    tag.seq = 5;
    tag.count = 1024;
    transport::WireHeader h = transport::makeHeader(42, tag, 4096);
    EXPECT_EQ(transport::headerMismatch(h, 42, tag, 4096), "");
    h.bytes = uint64_t(1) << 40;
    EXPECT_NE(transport::headerMismatch(h, 42, tag, 4096), "");
    h.bytes = 4095;
    EXPECT_NE(transport::headerMismatch(h, 42, tag, 4096), "");
    h = transport::makeHeader(43, tag, 4096);  // another communicator's frame
    EXPECT_NE(transport::headerMismatch(h, 42, tag, 4096), "");
    h = transport::makeHeader(42, tag, 4096);
    h.magic ^= 1;
    EXPECT_NE(transport::headerMismatch(h, 42, tag, 4096), "");
}

class Whitelist : public ::testing::Test {
protected:
    void TearDown() override {
        unsetenv("HCCL_WHITELIST_DISABLE");
        unsetenv("HCCL_WHITELIST_FILE");
        unsetenv("HCCL_CONNECT_TIMEOUT");
        net::loadWhitelist();
        std::remove(path_.c_str());
    }
    void enforce(const std::string& json) {
        std::ofstream(path_) << json;
        setenv("HCCL_WHITELIST_DISABLE", "0", 1);
        setenv("HCCL_WHITELIST_FILE", path_.c_str(), 1);
    }
    const std::string path_ = "/tmp/hostccl-whitelist-" + std::to_string(getpid()) + ".json";
};

// Whether the listener hung up on a connection from `source` at once (true) or is
// waiting for its hello (false).
bool droppedAtOnce(const char* source) {
    int fd = dial(net::Acceptor::instance().port(), source);
    if (fd < 0) return true;
    pollfd p{fd, POLLIN, 0};
    char c;
    bool closed = ::poll(&p, 1, 500) == 1 && ::recv(fd, &c, 1, MSG_DONTWAIT) == 0;
    ::close(fd);
    return closed;
}

TEST_F(Whitelist, AdmitsOnlyListedHosts) {
    enforce(R"({"host_ip": ["127.0.0.1", ")" + net::chooseLocalIp() + R"("], "device_ip": []})");
    World w(2);
    ASSERT_TRUE(w.ok());
    EXPECT_FALSE(droppedAtOnce("127.0.0.1"));
    EXPECT_TRUE(droppedAtOnce("127.0.0.5"));
    auto rcs = w.run([&](uint32_t r) { return exactAllReduces(w, r, 5); });
    EXPECT_EQ(rcs, std::vector<int>(2, 0));
}

TEST_F(Whitelist, BadConfigurationFailsInit) {
    HcclRootInfo root;
    setenv("HCCL_WHITELIST_DISABLE", "0", 1);
    EXPECT_EQ(HcclGetRootInfo(&root), HCCL_E_PARA);  // no file named
    enforce("{\"host_ip\": [\"not-an-address\"]}");
    EXPECT_EQ(HcclGetRootInfo(&root), HCCL_E_PARA);
    enforce("[1, 2");
    EXPECT_EQ(HcclGetRootInfo(&root), HCCL_E_PARA);
    std::vector<std::string> ips;
    std::string why;
    EXPECT_TRUE(net::parseWhitelist(R"({"host_ip": ["10.0.0.1", "10.0.0.2"]})", &ips, &why));
    EXPECT_EQ(ips, (std::vector<std::string>{"10.0.0.1", "10.0.0.2"}));
    EXPECT_FALSE(net::parseWhitelist(R"({"device_ip": []})", &ips, &why));
    EXPECT_NE(why.find("host_ip"), std::string::npos);
}

// Nobody listed can reach anybody: init fails within the connect timeout.
TEST_F(Whitelist, UnlistedRanksCannotJoin) {
    enforce(R"({"host_ip": ["10.9.9.9"]})");
    setenv("HCCL_CONNECT_TIMEOUT", "2", 1);
    auto start = std::chrono::steady_clock::now();
    World w(2);
    EXPECT_FALSE(w.ok());
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(15));
}

}  // namespace
