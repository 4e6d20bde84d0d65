#include "common/net/socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "common/env.h"
#include "common/net/congestion.h"

namespace hostccl::net {

void Fd::reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
}

namespace {
thread_local const std::atomic<bool>* tCancel = nullptr;
thread_local const std::atomic<bool>* tAbandoned = nullptr;
bool inCancelScope() { return tCancel != nullptr || tAbandoned != nullptr; }
thread_local std::chrono::steady_clock::duration tGrace{};
thread_local std::chrono::steady_clock::time_point tSeenAt{};  // when the flag was first seen set
// How often a cancellable wait looks at its flag: a cancelled dial is rare, and
// waking this often costs nothing next to what it waits for.
constexpr int kCancelSliceMs = 5;
}  // namespace

CancelScope::CancelScope(const std::atomic<bool>* flag, std::chrono::milliseconds grace,
                         const std::atomic<bool>* abandoned) {
    tCancel = flag;
    tAbandoned = abandoned;
    tGrace = grace;
    tSeenAt = {};
}
CancelScope::~CancelScope() {
    tCancel = nullptr;
    tAbandoned = nullptr;
}
bool CancelScope::cancelled() {
    if (tAbandoned != nullptr && tAbandoned->load(std::memory_order_acquire)) return true;
    if (tCancel == nullptr || !tCancel->load(std::memory_order_acquire)) return false;
    const auto now = std::chrono::steady_clock::now();
    if (tSeenAt == std::chrono::steady_clock::time_point{}) tSeenAt = now;
    return now - tSeenAt >= tGrace;
}

bool pauseFor(std::chrono::milliseconds d) {
    if (!inCancelScope()) {
        std::this_thread::sleep_for(d);
        return true;
    }
    const auto end = std::chrono::steady_clock::now() + d;
    for (auto now = std::chrono::steady_clock::now(); now < end; now = std::chrono::steady_clock::now()) {
        if (CancelScope::cancelled()) return false;
        std::this_thread::sleep_for(std::min<std::chrono::steady_clock::duration>(end - now, std::chrono::milliseconds(kCancelSliceMs)));
    }
    return !CancelScope::cancelled();
}

static std::string errnoText(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

static bool toSockaddr(const std::string& ip, uint16_t port, sockaddr_in* sa) {
    std::memset(sa, 0, sizeof *sa);
    sa->sin_family = AF_INET;
    sa->sin_port = htons(port);
    if (ip.empty()) {
        sa->sin_addr.s_addr = htonl(INADDR_ANY);
        return true;
    }
    return inet_pton(AF_INET, ip.c_str(), &sa->sin_addr) == 1;
}

Fd listenTcp(const std::string& ip, uint16_t port, std::string* err) {
    sockaddr_in sa;
    if (!toSockaddr(ip, port, &sa)) {
        *err = "not an IPv4 address: '" + ip + "'";
        return Fd();
    }
    Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    if (!fd.valid()) {
        *err = errnoText("socket");
        return Fd();
    }
    int one = 1;
    setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    applyCongestionPolicy(fd.get());  // accepted sockets take the listener's
    if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
        *err = errnoText(("bind " + ip + ":" + std::to_string(port)).c_str());
        return Fd();
    }
    // The kernel caps the backlog at net.core.somaxconn: asking for the most lets an
    // administrator's raised limit (HCCL's advice at thousands of ranks) take effect.
    if (::listen(fd.get(), 65535) != 0) {
        *err = errnoText("listen");
        return Fd();
    }
    return fd;
}

uint16_t boundPort(int fd) {
    sockaddr_in sa{};
    socklen_t len = sizeof sa;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0) return 0;
    return ntohs(sa.sin_port);
}

static std::string addrText(const sockaddr_in& sa) {
    char buf[INET_ADDRSTRLEN] = {0};
    inet_ntop(AF_INET, &sa.sin_addr, buf, sizeof buf);
    return buf;
}

std::string localIp(int fd) {
    sockaddr_in sa{};
    socklen_t len = sizeof sa;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0) return "";
    return addrText(sa);
}

std::string peerIp(int fd) {
    sockaddr_in sa{};
    socklen_t len = sizeof sa;
    if (getpeername(fd, reinterpret_cast<sockaddr*>(&sa), &len) != 0) return "";
    return addrText(sa);
}

void setNonBlocking(int fd) { fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK); }

void setNoDelay(int fd) {
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

// Waits for `events` on fd; false on deadline or poll error.
static bool waitFd(int fd, short events, Deadline deadline, std::string* err) {
    for (;;) {
        if (deadline.expired()) {
            *err = "timed out";
            return false;
        }
        if (CancelScope::cancelled()) {
            *err = "cancelled";
            return false;
        }
        pollfd p{fd, events, 0};
        int rc = ::poll(&p, 1, deadline.remainingMs(inCancelScope() ? kCancelSliceMs : 1000));
        if (rc > 0) return true;
        if (rc < 0 && errno != EINTR) {
            *err = errnoText("poll");
            return false;
        }
    }
}

// One non-blocking connect attempt; 1 connected, 0 retryable failure, -1 fatal.
static int connectOnce(const sockaddr_in& sa, Deadline deadline, OnRefused onRefused, Fd* out, std::string* err) {
    const int refused = onRefused == OnRefused::Retry ? 0 : -1;
    Fd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0));
    if (!fd.valid()) {
        *err = errnoText("socket");
        return -1;
    }
    applyCongestionPolicy(fd.get());
    int rc = ::connect(fd.get(), reinterpret_cast<const sockaddr*>(&sa), sizeof sa);
    if (rc != 0 && errno != EINPROGRESS) {
        *err = errnoText("connect");
        if (errno == ECONNREFUSED) return refused;
        return (errno == ENETUNREACH || errno == EHOSTUNREACH || errno == ETIMEDOUT || errno == EAGAIN) ? 0 : -1;
    }
    if (rc != 0) {
        if (!waitFd(fd.get(), POLLOUT, deadline, err)) return -1;
        int soerr = 0;
        socklen_t len = sizeof soerr;
        getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &soerr, &len);
        if (soerr != 0) {
            *err = std::string("connect: ") + std::strerror(soerr);
            return soerr == ECONNREFUSED ? refused : 0;
        }
    }
    *out = std::move(fd);
    return 1;
}

Fd connectTcp(const Endpoint& to, Deadline deadline, std::string* err, OnRefused onRefused) {
    sockaddr_in sa;
    if (!toSockaddr(to.ip, to.port, &sa) || to.ip.empty()) {
        *err = "not an IPv4 address: '" + to.ip + "'";
        return Fd();
    }
    auto backoff = std::chrono::milliseconds(1);
    for (;;) {
        Fd fd;
        int rc = connectOnce(sa, deadline, onRefused, &fd, err);
        if (rc == 1) {
            int flags = fcntl(fd.get(), F_GETFL);
            fcntl(fd.get(), F_SETFL, flags & ~O_NONBLOCK);
            setNoDelay(fd.get());  // handshakes are small request-reply exchanges: no Nagle delay
            return fd;
        }
        if (rc < 0 || deadline.expired() || !pauseFor(backoff)) {
            if (CancelScope::cancelled()) *err = "cancelled";
            *err = "connect to " + to.str() + " failed: " + *err;
            return Fd();
        }
        backoff = std::min(backoff * 2, std::chrono::milliseconds(200));
    }
}

Fd acceptTcp(int listenFd, Deadline deadline, std::string* err) {
    if (!waitFd(listenFd, POLLIN, deadline, err)) return Fd();
    int fd = ::accept4(listenFd, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) {
        *err = errnoText("accept");
        return Fd();
    }
    setNoDelay(fd);
    return Fd(fd);
}

bool sendAll(int fd, const void* buf, size_t len, Deadline deadline, std::string* err) {
    const char* p = static_cast<const char*>(buf);
    while (len > 0) {
        ssize_t n = ::send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n > 0) {
            p += n;
            len -= static_cast<size_t>(n);
        } else if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)) {
            if (!waitFd(fd, POLLOUT, deadline, err)) return false;
        } else {
            *err = errnoText("send");
            return false;
        }
    }
    return true;
}

bool recvAll(int fd, void* buf, size_t len, Deadline deadline, std::string* err) {
    char* p = static_cast<char*>(buf);
    while (len > 0) {
        ssize_t n = ::recv(fd, p, len, MSG_DONTWAIT);
        if (n > 0) {
            p += n;
            len -= static_cast<size_t>(n);
        } else if (n == 0) {
            *err = "connection closed by peer";
            return false;
        } else if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR) {
            if (!waitFd(fd, POLLIN, deadline, err)) return false;
        } else {
            *err = errnoText("recv");
            return false;
        }
    }
    return true;
}

bool interfaceAdmitted(const std::string& spec, const std::string& ifname) {
    if (spec.empty()) return true;
    bool exclude = false, exact = false;
    size_t pos = 0;
    if (spec[pos] == '^') exclude = true, ++pos;
    if (pos < spec.size() && spec[pos] == '=') exact = true, ++pos;
    bool matched = false;
    size_t start = pos;
    while (start <= spec.size()) {
        size_t comma = spec.find(',', start);
        std::string item = spec.substr(start, comma == std::string::npos ? std::string::npos : comma - start);
        if (!item.empty() && (exact ? ifname == item : ifname.compare(0, item.size(), item) == 0)) matched = true;
        if (comma == std::string::npos) break;
        start = comma + 1;
    }
    return exclude ? !matched : matched;
}

std::string chooseLocalIp() {
    if (auto ip = env::raw("HCCL_IF_IP")) return *ip;
    std::string spec = env::getString("HCCL_SOCKET_IFNAME");
    ifaddrs* list = nullptr;
    if (getifaddrs(&list) != 0) return "127.0.0.1";
    std::string chosen, loopback;
    for (ifaddrs* i = list; i != nullptr; i = i->ifa_next) {
        if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET || !(i->ifa_flags & IFF_UP)) continue;
        if (!interfaceAdmitted(spec, i->ifa_name)) continue;
        std::string ip = addrText(*reinterpret_cast<sockaddr_in*>(i->ifa_addr));
        if (i->ifa_flags & IFF_LOOPBACK) {
            if (loopback.empty()) loopback = ip;
        } else if (chosen.empty()) {
            chosen = ip;
        }
    }
    freeifaddrs(list);
    if (!chosen.empty()) return chosen;
    return loopback.empty() ? "127.0.0.1" : loopback;
}

}  // namespace hostccl::net
