#include "transports/tcp/tcp_connect.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <random>

#include "common/env.h"

namespace hostccl::transport {

namespace {

constexpr unsigned kMostLanes = 8;
constexpr std::chrono::milliseconds kHelloWait{5000};

struct LaneInvite {
    uint16_t port;
    uint16_t pad[3];
    uint64_t token;
};
struct LaneHello {
    uint64_t token;
    uint32_t lane;
    uint32_t pad;
};

// The lower rank: accepts lanes 1..count-1 on a listener of its own, ignoring
// connections from another address, or that do not present the token at once.
bool acceptLanes(int first, unsigned count, Deadline deadline, std::vector<net::Fd>* lanes, std::string* why) {
    net::Fd listener = net::listenTcp(net::localIp(first), 0, why);
    if (!listener.valid()) return false;
    std::random_device random;
    const uint64_t token = uint64_t(random()) << 32 | random();
    const LaneInvite invite{net::boundPort(listener.get()), {0, 0, 0}, token};
    if (!net::sendAll(first, &invite, sizeof invite, deadline, why)) return false;
    const std::string peer = net::peerIp(first);
    for (unsigned joined = 1; joined < count;) {
        net::Fd fd = net::acceptTcp(listener.get(), deadline, why);
        if (!fd.valid()) return false;
        if (net::peerIp(fd.get()) != peer) continue;  // not from the peer's address
        // The peer sends its hello right after connecting: a connection that stays
        // silent is someone else's, and must not hold the link up until the deadline.
        const Deadline soon = Deadline::after(kHelloWait);
        const Deadline hello = soon.at() < deadline.at() ? soon : deadline;
        LaneHello got{};
        std::string ignored;
        if (!net::recvAll(fd.get(), &got, sizeof got, hello, &ignored) || got.token != invite.token || got.lane == 0 ||
            got.lane >= count || (*lanes)[got.lane].valid())
            continue;  // not our peer's lane: drop it and keep listening
        (*lanes)[got.lane] = std::move(fd);
        ++joined;
    }
    const char ready = 'L';
    return net::sendAll(first, &ready, 1, deadline, why);
}

// The higher rank: connects lanes 1..count-1 to the port the lower rank sent.
bool connectLanes(int first, unsigned count, Deadline deadline, std::vector<net::Fd>* lanes, std::string* why) {
    LaneInvite invite{};
    if (!net::recvAll(first, &invite, sizeof invite, deadline, why)) return false;
    const net::Endpoint to{net::peerIp(first), invite.port};
    for (unsigned k = 1; k < count; ++k) {
        net::Fd fd = net::connectTcp(to, deadline, why);
        if (!fd.valid()) return false;
        const LaneHello hello{invite.token, k, 0};
        if (!net::sendAll(fd.get(), &hello, sizeof hello, deadline, why)) return false;
        (*lanes)[k] = std::move(fd);
    }
    char ready = 0;
    if (!net::recvAll(first, &ready, 1, deadline, why)) return false;
    if (ready != 'L') *why = "malformed lane confirmation";
    return ready == 'L';
}

}  // namespace

// Two sockets moved 13-20 % more than one each way between two namespace hosts and
// 10 % over loopback (64 MiB exchanges, docs/performance.md "sockets per link"); four a few per cent
// more again, within the spread, at twice the descriptors and socket buffers.
// (Read once: a malformed value is reported once, not for every link.)
unsigned wantedTcpLanes() {
    static const auto lanes = static_cast<unsigned>(env::getInt("HOSTCCL_TCP_SOCKETS", 1, kMostLanes));
    return lanes;
}

bool openTcpLanes(net::Fd first, bool listens, unsigned wanted, Deadline deadline, std::vector<net::Fd>* lanes,
                  std::string* why) {
    const uint8_t mine = static_cast<uint8_t>(std::clamp(wanted, 1u, kMostLanes));
    uint8_t theirs = 0;
    if (!net::sendAll(first.get(), &mine, 1, deadline, why) || !net::recvAll(first.get(), &theirs, 1, deadline, why))
        return false;
    const unsigned count = std::clamp<unsigned>(std::min<unsigned>(mine, theirs), 1, kMostLanes);
    lanes->clear();
    lanes->resize(count);
    const int fd = first.get();
    (*lanes)[0] = std::move(first);
    if (count == 1) return true;
    return listens ? acceptLanes(fd, count, deadline, lanes, why) : connectLanes(fd, count, deadline, lanes, why);
}

}  // namespace hostccl::transport
