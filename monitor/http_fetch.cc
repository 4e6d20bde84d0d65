#include "monitor/http_fetch.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

namespace hostccl::monitor {

namespace {
constexpr size_t kInFlight = 256;
constexpr size_t kMaxAnswer = size_t(64) << 20;

struct Fetch {
    int fd = -1;
    std::string request, answer;
    size_t sent = 0;
    bool done = false;
};

int startConnect(const net::Endpoint& e) {
    sockaddr_in sa{};
    sa.sin_family = AF_INET;
    sa.sin_port = htons(e.port);
    if (inet_pton(AF_INET, e.ip.c_str(), &sa.sin_addr) != 1) return -1;
    const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) return -1;
    if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0 && errno != EINPROGRESS) {
        ::close(fd);
        return -1;
    }
    return fd;
}

// One poll event's worth of work; false when the fetch has ended.
bool step(Fetch& f, short revents) {
    if (revents & (POLLERR | POLLNVAL)) return false;
    if (f.sent < f.request.size() && (revents & POLLOUT)) {
        const ssize_t n = ::send(f.fd, f.request.data() + f.sent, f.request.size() - f.sent, MSG_NOSIGNAL);
        if (n < 0 && errno != EAGAIN && errno != EINTR) return false;
        if (n > 0) f.sent += size_t(n);
    }
    if (revents & (POLLIN | POLLHUP)) {
        char buf[16384];
        const ssize_t n = ::recv(f.fd, buf, sizeof buf, 0);
        if (n == 0) return false;
        if (n < 0) return errno == EAGAIN || errno == EINTR;
        f.answer.append(buf, size_t(n));
        if (f.answer.size() > kMaxAnswer) return false;
    }
    return true;
}

std::string bodyOf(const std::string& answer) {
    if (answer.rfind("HTTP/1.1 200", 0) != 0 && answer.rfind("HTTP/1.0 200", 0) != 0) return "";
    const size_t at = answer.find("\r\n\r\n");
    return at == std::string::npos ? "" : answer.substr(at + 4);
}
}  // namespace

std::vector<std::string> fetchAll(const std::vector<net::Endpoint>& endpoints, const std::string& path,
                                  std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    std::vector<Fetch> fetches(endpoints.size());
    size_t next = 0, open = 0;
    std::vector<pollfd> fds;
    std::vector<size_t> index;
    for (;;) {
        for (; next < endpoints.size() && open < kInFlight; ++next) {
            Fetch& f = fetches[next];
            f.fd = startConnect(endpoints[next]);
            f.request = "GET " + path + " HTTP/1.1\r\nHost: " + endpoints[next].str() + "\r\nConnection: close\r\n\r\n";
            if (f.fd < 0) f.done = true;
            else ++open;
        }
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (open == 0 || left.count() <= 0) break;
        fds.clear();
        index.clear();
        for (size_t i = 0; i < fetches.size(); ++i) {
            const Fetch& f = fetches[i];
            if (f.done || f.fd < 0) continue;
            fds.push_back({f.fd, short(POLLIN | (f.sent < f.request.size() ? POLLOUT : 0)), 0});
            index.push_back(i);
        }
        if (::poll(fds.data(), fds.size(), int(left.count())) < 0 && errno != EINTR) break;
        for (size_t k = 0; k < fds.size(); ++k) {
            Fetch& f = fetches[index[k]];
            if (fds[k].revents == 0 || step(f, fds[k].revents)) continue;
            ::close(f.fd);
            f.fd = -1;
            f.done = true;
            --open;
        }
    }
    std::vector<std::string> bodies(endpoints.size());
    for (size_t i = 0; i < fetches.size(); ++i) {
        if (fetches[i].fd >= 0) ::close(fetches[i].fd);
        if (fetches[i].done) bodies[i] = bodyOf(fetches[i].answer);
    }
    return bodies;
}

}  // namespace hostccl::monitor
