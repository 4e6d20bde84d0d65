#include "transports/tcp/tcp_connect.h"

#include <algorithm>
#include <cstdint>
#include <random>

#include "common/env.h"

namespace hostccl::transport {

namespace {

constexpr unsigned kMostLanes = 8;

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
// connections that do not present the token.
bool acceptLanes(int first, unsigned count, Deadline deadline, std::vector<net::Fd>* lanes, std::string* why) {
    net::Fd listener = net::listenTcp(net::localIp(first), 0, why);
    if (!listener.valid()) return false;
    LaneInvite invite{net::boundPort(listener.get()), {0, 0, 0}, std::random_device{}() * 0x100000001ull ^ std::random_device{}()};
    if (!net::sendAll(first, &invite, sizeof invite, deadline, why)) return false;
    for (unsigned joined = 1; joined < count;) {
        net::Fd fd = net::acceptTcp(listener.get(), deadline, why);
        if (!fd.valid()) return false;
        LaneHello hello{};
        std::string ignored;
        if (!net::recvAll(fd.get(), &hello, sizeof hello, deadline, &ignored) || hello.token != invite.token ||
            hello.lane == 0 || hello.lane >= count || (*lanes)[hello.lane].valid())
            continue;  // not our peer's lane: drop it and keep listening
        (*lanes)[hello.lane] = std::move(fd);
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
// 10 % over loopback (64 MiB exchanges, docs/performance.md); four a few per cent
// more again, within the spread, at twice the descriptors and socket buffers.
unsigned wantedTcpLanes() { return static_cast<unsigned>(env::getInt("HOSTCCL_TCP_SOCKETS", 1, kMostLanes)); }

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
