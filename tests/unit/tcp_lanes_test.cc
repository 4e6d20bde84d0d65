// A TCP link striped over several sockets (transports/tcp/): how a message is cut
// into lane parts, the lane handshake over the first connection, and messages of
// every size (empty, odd, split and not, reduced on arrival) arriving exact while
// the lanes run ahead of each other.
#include <gtest/gtest.h>

#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <cstring>
#include <numeric>
#include <thread>

#include "common/reduce.h"
#include "transports/tcp/tcp_connect.h"
#include "transports/tcp/tcp_link.h"
#include "tests/support/loopback.h"

using hostccl::Deadline;
using hostccl::net::Fd;
using hostccl::test::loopbackConnection;
using hostccl::transport::kLaneMinBytes;
using hostccl::transport::lanePart;
using hostccl::transport::TcpLink;
using hostccl::transport::Transfer;

namespace {

constexpr uint64_t kCommId = 0x7a11;

// Every lane's part, in lane order, tiles [0, bytes) exactly.
void expectTiles(size_t bytes, uint32_t lanes, uint32_t expectUsed) {
    size_t next = 0;
    uint32_t used = 0;
    for (uint32_t k = 0; k < lanes; ++k) {
        const auto part = lanePart(bytes, k, lanes);
        if (!part.carried) {
            EXPECT_EQ(part.bytes, 0u);
            continue;
        }
        EXPECT_EQ(k, used) << "carrying lanes come first";
        EXPECT_EQ(part.offset, next) << bytes << " bytes, lane " << k;
        if (part.offset + part.bytes < bytes) {
            EXPECT_EQ((part.offset + part.bytes) % 4096, 0u);
        }
        next += part.bytes;
        ++used;
    }
    EXPECT_EQ(next, bytes);
    EXPECT_EQ(used, expectUsed) << bytes << " bytes over " << lanes << " lanes";
}

// The sockets of both ends of one link: a loopback connection, then the lane handshake
// on both sides at once (`wantedLow` by the listening lower rank, `wantedHigh` by the other).
void openLanes(unsigned wantedLow, unsigned wantedHigh, std::vector<Fd>* lowFds, std::vector<Fd>* highFds) {
    const auto deadline = Deadline::after(std::chrono::seconds(10));
    Fd up, down;
    loopbackConnection(deadline, &up, &down);
    std::string why, whyHigh;
    bool highOk = false;
    std::thread high([&] {
        highOk = hostccl::transport::openTcpLanes(std::move(up), false, wantedHigh, deadline, highFds, &whyHigh);
    });
    const bool lowOk = hostccl::transport::openTcpLanes(std::move(down), true, wantedLow, deadline, lowFds, &why);
    high.join();
    EXPECT_TRUE(lowOk) << why;
    EXPECT_TRUE(highOk) << whyHigh;
}

// Two ends of one link.
struct LinkPair {
    std::unique_ptr<TcpLink> low, high;
    LinkPair(unsigned wantedLow, unsigned wantedHigh) {
        std::vector<Fd> lowFds, highFds;
        openLanes(wantedLow, wantedHigh, &lowFds, &highFds);
        low = std::make_unique<TcpLink>(1, kCommId, std::move(lowFds), "127.0.0.1");
        this->high = std::make_unique<TcpLink>(0, kCommId, std::move(highFds), "127.0.0.1");
    }
    // Progresses both ends until every transfer completed or failed.
    void run(const std::vector<Transfer*>& all) {
        auto settled = [&] {
            for (const Transfer* t : all)
                if (!t->complete && t->error == HCCL_SUCCESS) return false;
            return true;
        };
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        while (!settled() && std::chrono::steady_clock::now() < until) {
            low->progress();
            high->progress();
        }
        ASSERT_TRUE(settled()) << "transfers neither completed nor failed";
    }
};

Transfer transfer(Transfer::Dir dir, const void* src, void* dst, size_t bytes, uint32_t index) {
    Transfer t;
    t.dir = dir;
    t.src = src;
    t.dst = dst;
    t.bytes = bytes;
    t.tag.index = index;
    return t;
}

std::vector<char> pattern(size_t bytes, int seed) {
    std::vector<char> v(bytes);
    for (size_t i = 0; i < bytes; ++i) v[i] = static_cast<char>((i * 131 + seed * 7) >> 3);
    return v;
}

}  // namespace

TEST(TcpLanes, PartsTileTheMessageAtPageBoundaries) {
    expectTiles(0, 4, 1);
    expectTiles(1, 4, 1);
    expectTiles(2 * kLaneMinBytes - 1, 4, 1);
    expectTiles(2 * kLaneMinBytes, 4, 2);
    expectTiles(3 * kLaneMinBytes + 12345, 4, 3);
    expectTiles((64 << 20) + 4, 4, 4);
    expectTiles((64 << 20) + 4, 1, 1);
    expectTiles((7 << 20) + 8, 3, 3);
}

TEST(TcpLanes, BothEndsTakeTheSmallerCount) {
    EXPECT_EQ(LinkPair(4, 2).low->lanes(), 2u);
    EXPECT_EQ(LinkPair(1, 4).high->lanes(), 1u);
    LinkPair three(3, 3);
    EXPECT_EQ(three.low->lanes(), 3u);
    EXPECT_EQ(three.high->lanes(), 3u);
}

// Messages of every size, all posted at once both ways, so lanes with small parts
// run messages ahead of lanes still on a large one.
TEST(TcpLanes, EverySizeArrivesExactBothWays) {
    const std::vector<size_t> sizes = {0, 1, 4095, 2 * kLaneMinBytes - 1, (3 << 20) + 3, 5, (9 << 20) + 4096, 0, 64};
    for (unsigned lanes : {1u, 2u, 4u}) {
        LinkPair pair(lanes, lanes);
        std::vector<std::vector<char>> out, back, in, inBack;
        std::vector<Transfer> ts;
        ts.reserve(4 * sizes.size());
        for (size_t k = 0; k < sizes.size(); ++k) {
            out.push_back(pattern(sizes[k], int(k)));
            back.push_back(pattern(sizes[k], int(k) + 50));
            in.emplace_back(sizes[k], 0);
            inBack.emplace_back(sizes[k], 0);
        }
        for (size_t k = 0; k < sizes.size(); ++k) {
            const auto i = static_cast<uint32_t>(k);
            ts.push_back(transfer(Transfer::Dir::Send, out[k].data(), nullptr, sizes[k], i));
            ts.push_back(transfer(Transfer::Dir::Recv, nullptr, in[k].data(), sizes[k], i));
            ts.push_back(transfer(Transfer::Dir::Send, back[k].data(), nullptr, sizes[k], i));
            ts.push_back(transfer(Transfer::Dir::Recv, nullptr, inBack[k].data(), sizes[k], i));
        }
        std::vector<Transfer*> all;
        for (size_t k = 0; k < ts.size(); k += 4) {
            pair.low->post(&ts[k]);
            pair.high->post(&ts[k + 1]);
            pair.high->post(&ts[k + 2]);
            pair.low->post(&ts[k + 3]);
        }
        for (Transfer& t : ts) all.push_back(&t);
        pair.run(all);
        for (size_t k = 0; k < sizes.size(); ++k) {
            EXPECT_EQ(ts[4 * k + 1].error, HCCL_SUCCESS) << ts[4 * k + 1].errorText;
            EXPECT_TRUE(in[k] == out[k]) << sizes[k] << " bytes over " << lanes << " lanes";
            EXPECT_TRUE(inBack[k] == back[k]) << sizes[k] << " bytes back over " << lanes << " lanes";
            EXPECT_EQ(ts[4 * k + 1].moved, sizes[k]);
            EXPECT_EQ(ts[4 * k].moved, sizes[k]);
        }
    }
}

// Reduce on arrival with a staging chunk that cuts elements: every lane reduces its
// own part into the destination at the right offset.
TEST(TcpLanes, ReduceOnArrivalOverLanes) {
    LinkPair pair(4, 4);
    const size_t count = (5 << 20) / sizeof(int32_t) + 7;
    std::vector<int32_t> sent(count), local(count), result(count, 0);
    std::iota(sent.begin(), sent.end(), 1);
    for (size_t i = 0; i < count; ++i) local[i] = int32_t(3 * i) - 11;
    Transfer s = transfer(Transfer::Dir::Send, sent.data(), nullptr, count * sizeof(int32_t), 0);
    Transfer r = transfer(Transfer::Dir::Recv, nullptr, result.data(), count * sizeof(int32_t), 0);
    r.reduce = hostccl::reduceFunction(HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM);
    r.local = local.data();
    r.elemSize = sizeof(int32_t);
    pair.high->post(&s);
    pair.low->post(&r);
    pair.run({&s, &r});
    ASSERT_EQ(r.error, HCCL_SUCCESS) << r.errorText;
    for (size_t i = 0; i < count; ++i) ASSERT_EQ(result[i], sent[i] + local[i]) << "element " << i;
}

// A receiver that expects another size fails with both sizes named, whichever lane
// sees it first, and the sender's end hears the link close.
TEST(TcpLanes, SizeMismatchFailsBothEnds) {
    LinkPair pair(2, 2);
    std::vector<char> src(2 << 20, 1), dst((2 << 20) + 4096, 0);
    Transfer s = transfer(Transfer::Dir::Send, src.data(), nullptr, src.size(), 0);
    Transfer r = transfer(Transfer::Dir::Recv, nullptr, dst.data(), dst.size(), 0);
    pair.low->post(&s);
    pair.high->post(&r);
    pair.run({&s, &r});
    EXPECT_EQ(r.error, HCCL_E_PARA);
    EXPECT_NE(r.errorText.find("2097152"), std::string::npos) << r.errorText;
    EXPECT_NE(r.errorText.find("2101248"), std::string::npos) << r.errorText;
    // The failing end shuts its sockets: the sender's next receive hears the close.
    std::vector<char> reply(16);
    Transfer next = transfer(Transfer::Dir::Recv, nullptr, reply.data(), reply.size(), 1);
    pair.low->post(&next);
    pair.run({&next});
    EXPECT_EQ(next.error, HCCL_E_TCP_TRANSFER);
    EXPECT_EQ(next.errorText, "connection closed by peer (127.0.0.1)");
}

// The lower rank's lane listener takes only its peer's lanes: a connection that
// stays silent is dropped after a few seconds instead of holding the link up until
// the deadline, and one with the wrong token is dropped at once. (The wire layout of
// the invitation and the hello is written out here: this test is the peer.)
TEST(TcpLanes, TheListenerTakesOnlyThePeersLanes) {
    std::string why;
    const auto deadline = Deadline::after(std::chrono::seconds(30));
    Fd first, down;
    loopbackConnection(deadline, &first, &down);
    std::vector<Fd> lanes;
    bool ok = false;
    const auto began = std::chrono::steady_clock::now();
    std::thread low([&] { ok = hostccl::transport::openTcpLanes(std::move(down), true, 2, deadline, &lanes, &why); });
    struct Invite { uint16_t port, pad[3]; uint64_t token; } invite{};
    struct Hello { uint64_t token; uint32_t lane, pad; };
    const uint8_t wanted = 2;
    uint8_t theirs = 0;
    std::string err;
    ASSERT_TRUE(hostccl::net::sendAll(first.get(), &wanted, 1, deadline, &err)) << err;
    ASSERT_TRUE(hostccl::net::recvAll(first.get(), &theirs, 1, deadline, &err)) << err;
    ASSERT_TRUE(hostccl::net::recvAll(first.get(), &invite, sizeof invite, deadline, &err)) << err;
    const hostccl::net::Endpoint port{"127.0.0.1", invite.port};
    Fd silent = hostccl::net::connectTcp(port, deadline, &err);
    Fd impostor = hostccl::net::connectTcp(port, deadline, &err);
    const Hello wrong{invite.token + 1, 1, 0}, right{invite.token, 1, 0};
    ASSERT_TRUE(hostccl::net::sendAll(impostor.get(), &wrong, sizeof wrong, deadline, &err)) << err;
    Fd lane = hostccl::net::connectTcp(port, deadline, &err);
    ASSERT_TRUE(hostccl::net::sendAll(lane.get(), &right, sizeof right, deadline, &err)) << err;
    char ready = 0;
    ASSERT_TRUE(hostccl::net::recvAll(first.get(), &ready, 1, deadline, &err)) << err;
    low.join();
    ASSERT_TRUE(ok) << why;
    EXPECT_EQ(ready, 'L');
    // The silent connection was given up long before the 30 s deadline.
    EXPECT_LT(std::chrono::steady_clock::now() - began, std::chrono::seconds(20));
    ASSERT_EQ(lanes.size(), 2u);
    const char probe = 'p';
    char got = 0;
    ASSERT_TRUE(hostccl::net::sendAll(lane.get(), &probe, 1, deadline, &err)) << err;
    ASSERT_TRUE(hostccl::net::recvAll(lanes[1].get(), &got, 1, deadline, &err)) << err;
    EXPECT_EQ(got, 'p') << "lane 1 is not the connection that presented the token";
}

// A receive drained part-way asks the kernel to wake it for a batch (SO_RCVLOWAT), not
// for each segment, and asks for 1 byte again once the part is in: otherwise a small
// message after a large one would not make the socket readable, and a waiter would
// sleep through it until its poll slice ended.
TEST(TcpLanes, AReceiveDrainedMidMessageWakesForABatchThenForAnyByteAgain) {
    const auto deadline = Deadline::after(std::chrono::seconds(10));
    std::vector<Fd> lowFds, highFds;
    openLanes(1, 1, &lowFds, &highFds);
    ASSERT_EQ(lowFds.size(), 1u);
    ASSERT_EQ(highFds.size(), 1u);
    const int raw = lowFds[0].get();  // the sender writes the wire format itself
    TcpLink receiver(0, kCommId, std::move(highFds), "127.0.0.1");
    std::vector<pollfd> fds;
    receiver.appendPollFds(&fds);
    ASSERT_EQ(fds.size(), 1u);
    auto wakeBytes = [&] {
        int v = 0;
        socklen_t len = sizeof v;
        EXPECT_EQ(getsockopt(fds[0].fd, SOL_SOCKET, SO_RCVLOWAT, &v, &len), 0);
        return v;
    };
    auto readable = [&](int waitMs) {
        pollfd p{fds[0].fd, POLLIN, 0};
        return ::poll(&p, 1, waitMs) == 1 && (p.revents & POLLIN) != 0;
    };
    auto send = [&](const void* data, size_t bytes) {
        std::string err;
        ASSERT_TRUE(hostccl::net::sendAll(raw, data, bytes, deadline, &err)) << err;
    };
    // Progresses the receiver until `done` holds; false when 30 s pass first.
    auto progressUntil = [&](auto done) {
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        while (!done() && std::chrono::steady_clock::now() < until) receiver.progress();
        return done();
    };

    const size_t big = 1 << 20, first = 100 * 1024;
    const std::vector<char> payload = pattern(big, 3);
    std::vector<char> in(big, 0);
    Transfer r = transfer(Transfer::Dir::Recv, nullptr, in.data(), big, 0);
    receiver.post(&r);
    const hostccl::transport::WireHeader h = hostccl::transport::makeHeader(kCommId, r.tag, big);
    send(&h, sizeof h);
    send(payload.data(), first);
    ASSERT_TRUE(progressUntil([&] { return r.moved >= first; })) << "the first 100 KiB never arrived";
    receiver.progress();  // drained: nothing more queued
    EXPECT_EQ(wakeBytes(), 256 * 1024) << "woken per batch while " << big - first << " bytes are still expected";
    send(payload.data() + first, 1000);
    EXPECT_FALSE(readable(0)) << "1000 bytes are not a batch";
    std::thread rest([&] { send(payload.data() + first + 1000, big - first - 1000); });  // more than the socket holds
    const bool settled = progressUntil([&] { return r.complete || r.error != HCCL_SUCCESS; });
    rest.join();
    ASSERT_TRUE(settled) << "the 1 MiB message neither completed nor failed";
    ASSERT_EQ(r.error, HCCL_SUCCESS) << r.errorText;
    EXPECT_TRUE(in == payload);
    EXPECT_EQ(wakeBytes(), 1) << "the part is in: the next header must wake a waiter";

    // A message smaller than a batch, after the large one, makes the socket readable.
    const char small[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    char smallIn[8] = {};
    Transfer s = transfer(Transfer::Dir::Recv, nullptr, smallIn, sizeof small, 1);
    receiver.post(&s);
    const hostccl::transport::WireHeader hs = hostccl::transport::makeHeader(kCommId, s.tag, sizeof small);
    send(&hs, sizeof hs);
    send(small, sizeof small);
    EXPECT_TRUE(readable(5000)) << "a small message after a large one did not wake the receiver";
    ASSERT_TRUE(progressUntil([&] { return s.complete || s.error != HCCL_SUCCESS; })) << "the small message never settled";
    ASSERT_EQ(s.error, HCCL_SUCCESS) << s.errorText;
    EXPECT_EQ(std::memcmp(smallIn, small, sizeof small), 0);
}

// Small messages that wait on the socket together are read with one system call (the
// lane's inbox), and the bytes read ahead stay the lane's: each later receive, reduced
// or not, and a large message whose start was read ahead arrive exact, and a header
// read ahead still counts as waiting for a receive.
TEST(TcpLanes, SmallMessagesWaitingTogetherAreReadAheadAndEachArrivesExact) {
    const auto deadline = Deadline::after(std::chrono::seconds(10));
    std::vector<Fd> lowFds, highFds;
    openLanes(1, 1, &lowFds, &highFds);
    const int raw = lowFds[0].get();  // the sender writes the wire format itself
    const int socketFd = highFds[0].get();
    TcpLink receiver(0, kCommId, std::move(highFds), "127.0.0.1");
    using hostccl::transport::makeHeader;
    using hostccl::transport::WireHeader;
    auto progressUntil = [&](Transfer* t) {
        const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
        while (!t->complete && t->error == HCCL_SUCCESS && std::chrono::steady_clock::now() < until) receiver.progress();
        return t->complete || t->error != HCCL_SUCCESS;
    };

    // Messages 0-2 (8, 0 and 40 bytes), then message 3's header and its first 2000 of
    // 64 KiB, in one write: 2,240 bytes waiting on the socket.
    const std::vector<char> m0 = pattern(8, 1), m3 = pattern(64 << 10, 4);
    const std::vector<int32_t> m2 = {1, -2, 3, -4, 5, -6, 7, -8, 9, -10}, local2 = {10, 20, 30, 40, 50, 60, 70, 80, 90, 100};
    std::vector<char> wire;
    auto put = [&](const void* data, size_t bytes) {
        wire.insert(wire.end(), static_cast<const char*>(data), static_cast<const char*>(data) + bytes);
    };
    Transfer r0 = transfer(Transfer::Dir::Recv, nullptr, nullptr, m0.size(), 0);
    Transfer r1 = transfer(Transfer::Dir::Recv, nullptr, nullptr, 0, 1);
    Transfer r2 = transfer(Transfer::Dir::Recv, nullptr, nullptr, m2.size() * sizeof(int32_t), 2);
    Transfer r3 = transfer(Transfer::Dir::Recv, nullptr, nullptr, m3.size(), 3);
    const WireHeader h0 = makeHeader(kCommId, r0.tag, r0.bytes), h1 = makeHeader(kCommId, r1.tag, 0),
                     h2 = makeHeader(kCommId, r2.tag, r2.bytes), h3 = makeHeader(kCommId, r3.tag, r3.bytes);
    put(&h0, sizeof h0);
    put(m0.data(), m0.size());
    put(&h1, sizeof h1);
    put(&h2, sizeof h2);
    put(m2.data(), r2.bytes);
    put(&h3, sizeof h3);
    put(m3.data(), 2000);
    std::string err;
    ASSERT_TRUE(hostccl::net::sendAll(raw, wire.data(), wire.size(), deadline, &err)) << err;

    std::vector<char> in0(m0.size(), 0), in3(m3.size(), 0);
    r0.dst = in0.data();
    receiver.post(&r0);
    ASSERT_TRUE(progressUntil(&r0));
    ASSERT_EQ(r0.error, HCCL_SUCCESS) << r0.errorText;
    EXPECT_TRUE(in0 == m0);
    int queued = -1;
    ASSERT_EQ(ioctl(socketFd, FIONREAD, &queued), 0);
    EXPECT_EQ(queued, 0) << "the messages after the first were left on the socket, not read ahead";
    WireHeader next{};
    ASSERT_TRUE(receiver.unclaimedHeader(&next)) << "a header read ahead must still count as waiting";
    EXPECT_EQ(hostccl::transport::tagOf(next).index, 1u);

    std::vector<int32_t> in2(m2.size(), 0);
    r2.dst = in2.data();
    r2.reduce = hostccl::reduceFunction(HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM);
    r2.local = local2.data();
    r2.elemSize = sizeof(int32_t);
    r3.dst = in3.data();
    receiver.post(&r1);
    receiver.post(&r2);
    receiver.post(&r3);
    ASSERT_TRUE(hostccl::net::sendAll(raw, m3.data() + 2000, m3.size() - 2000, deadline, &err)) << err;
    ASSERT_TRUE(progressUntil(&r3));
    for (Transfer* t : {&r1, &r2, &r3}) {
        EXPECT_TRUE(t->complete);
        EXPECT_EQ(t->error, HCCL_SUCCESS) << t->errorText;
        EXPECT_EQ(t->moved, t->bytes);
    }
    for (size_t i = 0; i < m2.size(); ++i) EXPECT_EQ(in2[i], m2[i] + local2[i]) << "element " << i;
    EXPECT_TRUE(in3 == m3);
}
