#include "core/net/handshake.h"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "common/log.h"
#include "common/net/socket.h"

namespace hostccl::net {

namespace {
constexpr uint32_t kMagic = 0x48435443;  // "HCTC"
constexpr uint16_t kHandshakeVersion = 1;
constexpr uint8_t kAccepted = 0xA5;

// MAC over the role, the nonce being answered and the identity of the connection,
// so a proof cannot be replayed for another communicator, rank pair or direction.
uint64_t proof(const Secret& secret, char role, uint64_t nonce, const Hello& h) {
    unsigned char buf[1 + 8 + 8 + 4 + 4 + 2];
    size_t off = 0;
    auto put = [&](const void* p, size_t n) {
        std::memcpy(buf + off, p, n);
        off += n;
    };
    put(&role, 1);
    put(&nonce, 8);
    put(&h.commId, 8);
    put(&h.fromRank, 4);
    put(&h.toRank, 4);
    put(&h.purpose, 2);
    return siphash24(secret, buf, off);
}

struct ServerProof {
    uint64_t serverNonce;
    uint64_t mac;
};
}  // namespace

Hello makeHello(Purpose purpose, uint64_t commId, uint32_t fromRank, uint32_t toRank) {
    return Hello{kMagic, kHandshakeVersion, static_cast<uint16_t>(purpose), commId, fromRank, toRank, randomU64()};
}

bool checkHello(const Hello& h, std::string* err) {
    if (h.magic != kMagic || h.version != kHandshakeVersion) {
        *err = "not a hostccl peer (bad magic or version)";
        return false;
    }
    if (h.purpose < uint16_t(Purpose::Rendezvous) || h.purpose > uint16_t(Purpose::JoinFailure)) {
        *err = "unknown connection purpose " + std::to_string(h.purpose);
        return false;
    }
    return true;
}

bool readHello(int fd, Hello* hello, Deadline deadline, std::string* err) {
    return recvAll(fd, hello, sizeof *hello, deadline, err) && checkHello(*hello, err);
}

bool clientHandshake(int fd, const Secret& secret, const Hello& hello, Deadline deadline, std::string* err,
                     bool* turnedAway) {
    if (turnedAway != nullptr) *turnedAway = true;
    if (!sendAll(fd, &hello, sizeof hello, deadline, err)) return false;
    ServerProof sp{};
    if (!recvAll(fd, &sp, sizeof sp, deadline, err)) return false;
    if (turnedAway != nullptr) *turnedAway = false;
    if (sp.mac != proof(secret, 'S', hello.nonce, hello)) {
        *err = "server failed to prove the job secret";
        return false;
    }
    uint64_t mine = proof(secret, 'C', sp.serverNonce, hello);
    if (!sendAll(fd, &mine, sizeof mine, deadline, err)) return false;
    uint8_t verdict = 0;
    if (!recvAll(fd, &verdict, 1, deadline, err)) return false;
    if (verdict != kAccepted) {
        *err = "server rejected the connection";
        return false;
    }
    return true;
}

Fd dialProven(const Endpoint& to, const Secret& secret, const Hello& hello, Deadline deadline, std::string* err) {
    Hello h = hello;
    auto pause = std::chrono::milliseconds(10);
    for (;;) {
        Fd fd = connectTcp(to, deadline, err);
        if (!fd.valid()) return fd;
        bool turnedAway = false;
        if (clientHandshake(fd.get(), secret, h, deadline, err, &turnedAway)) return fd;
        if (!turnedAway || deadline.expired()) break;
        log::debug("dial {}: turned away before the handshake ({}); trying again in {} ms", to.str(), *err, pause.count());
        fd = Fd();
        if (!pauseFor(std::min<std::chrono::milliseconds>(pause, std::chrono::milliseconds(deadline.remainingMs(1000))))) {
            *err = "cancelled";
            break;
        }
        pause = std::min<std::chrono::milliseconds>(pause * 2, std::chrono::milliseconds(500));
        h.nonce = randomU64();  // a fresh challenge for the new connection
        if (deadline.expired()) break;
    }
    *err = "handshake: " + *err;
    return Fd();
}

bool serverHandshake(int fd, const Secret& secret, const Hello& hello, Deadline deadline, std::string* err) {
    ServerProof sp{randomU64(), proof(secret, 'S', hello.nonce, hello)};
    if (!sendAll(fd, &sp, sizeof sp, deadline, err)) return false;
    uint64_t theirs = 0;
    if (!recvAll(fd, &theirs, sizeof theirs, deadline, err)) return false;
    if (theirs != proof(secret, 'C', sp.serverNonce, hello)) {
        *err = "client failed to prove the job secret";
        return false;
    }
    uint8_t verdict = kAccepted;
    return sendAll(fd, &verdict, 1, deadline, err);
}

}  // namespace hostccl::net
