// TCP socket helpers. Every blocking step takes a Deadline; errors come back as
// an errno-style message, never as an exception or a hang.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "common/deadline.h"

namespace hostccl::net {

// Owns a file descriptor.
class Fd {
public:
    Fd() = default;
    explicit Fd(int fd) : fd_(fd) {}
    ~Fd() { reset(); }
    Fd(Fd&& o) noexcept : fd_(o.release()) {}
    Fd& operator=(Fd&& o) noexcept {
        if (this != &o) {
            reset();
            fd_ = o.release();
        }
        return *this;
    }
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;

    int get() const { return fd_; }
    bool valid() const { return fd_ >= 0; }
    int release() {
        int f = fd_;
        fd_ = -1;
        return f;
    }
    void reset();

private:
    int fd_ = -1;
};

struct Endpoint {
    std::string ip;  // dotted IPv4
    uint16_t port = 0;
    std::string str() const { return ip + ":" + std::to_string(port); }
};

// Listens on ip:port (port 0 = any free port; ip "" = all interfaces).
Fd listenTcp(const std::string& ip, uint16_t port, std::string* err);
uint16_t boundPort(int fd);
std::string localIp(int fd);   // address of our side of a connected socket
std::string peerIp(int fd);

// What a refused attempt means: the peer's listener may not be up yet (retried), or
// it lives as long as the peer's process, so the process is gone (final).
enum class OnRefused { Retry, Fail };
// Connects, retrying unreachable attempts (and refused ones, by default) with
// back-off until the deadline.
Fd connectTcp(const Endpoint& to, Deadline deadline, std::string* err, OnRefused onRefused = OnRefused::Retry);
// Accepts one connection or returns an invalid Fd when the deadline passes.
Fd acceptTcp(int listenFd, Deadline deadline, std::string* err);

// Full reads/writes with a deadline (socket may be blocking or not).
bool sendAll(int fd, const void* buf, size_t len, Deadline deadline, std::string* err);
bool recvAll(int fd, void* buf, size_t len, Deadline deadline, std::string* err);

// While a scope naming `flag` lives, this thread's blocking waits above (connect,
// its back-off, sendAll, recvAll) fail with "cancelled" once `*flag` has been true
// for `grace`: a dial whose outcome no longer matters (the peer's own connection
// won the pair) gives up instead of waiting out its deadline for a peer that may
// have finished and gone, while a live peer still answers it within the grace
// (and so never sees a dial dropped mid-handshake). `abandoned`, when given, cancels
// at once: the dialing communicator has failed, so no outcome matters (a dial to a
// peer whose process is gone would otherwise retry until HCCL_CONNECT_TIMEOUT).
// Scopes do not nest.
class CancelScope {
public:
    CancelScope(const std::atomic<bool>* flag, std::chrono::milliseconds grace,
                const std::atomic<bool>* abandoned = nullptr);
    ~CancelScope();
    CancelScope(const CancelScope&) = delete;
    CancelScope& operator=(const CancelScope&) = delete;
    static bool cancelled();
};
// Sleeps for `d`; false (early) when this thread's scope is cancelled.
bool pauseFor(std::chrono::milliseconds d);

void setNonBlocking(int fd);
void setNoDelay(int fd);

// The address this process advertises: HCCL_IF_IP, else the first interface that
// HCCL_SOCKET_IFNAME admits, else the first up non-loopback IPv4 interface, else 127.0.0.1.
std::string chooseLocalIp();
// HCCL_SOCKET_IFNAME grammar: "eth,enp" prefixes; "^eth" excludes; "=eth0" exact; "^=eth0".
bool interfaceAdmitted(const std::string& spec, const std::string& ifname);

}  // namespace hostccl::net
