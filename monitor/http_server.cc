#include "monitor/http_server.h"

#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cerrno>
#include <vector>

namespace hostccl::monitor {

namespace {
const char* reason(int status) {
    switch (status) {
        case 200: return "OK";
        case 204: return "No Content";
        case 400: return "Bad Request";
        case 404: return "Not Found";
        case 405: return "Method Not Allowed";
        case 413: return "Payload Too Large";
        case 503: return "Service Unavailable";
        default: return "Error";
    }
}

void nonBlocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }
}  // namespace

ParsedRequest parseRequest(const std::string& bytes) {
    ParsedRequest r;
    const size_t end = bytes.find("\r\n\r\n");
    const size_t lineEnd = bytes.find("\r\n");
    if (end == std::string::npos && bytes.size() >= HttpServer::kMaxRequestBytes) {
        r.error = 413;
        return r;
    }
    // The request line can be judged as soon as it is whole.
    if (lineEnd != std::string::npos || end != std::string::npos) {
        const std::string line = bytes.substr(0, lineEnd);
        const size_t sp1 = line.find(' '), sp2 = line.rfind(' ');
        if (sp1 == std::string::npos || sp2 == sp1 || line.compare(sp2 + 1, 5, "HTTP/") != 0) {
            r.error = 400;
            return r;
        }
        if (line.compare(0, sp1, "GET") != 0) {
            r.error = 405;
            return r;
        }
        r.path = line.substr(sp1 + 1, sp2 - sp1 - 1);
        if (r.path.empty() || r.path[0] != '/') {
            r.error = 400;
            return r;
        }
        const size_t query = r.path.find('?');
        if (query != std::string::npos) r.path.resize(query);
    }
    r.complete = end != std::string::npos;
    return r;
}

std::string formatResponse(const HttpResponse& r) {
    return fmt::format(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nCache-Control: no-store\r\n"
        "Access-Control-Allow-Origin: *\r\nConnection: close\r\n\r\n{}",
        r.status, reason(r.status), r.contentType, r.body.size(), r.body);
}

std::unique_ptr<HttpServer> HttpServer::listen(const std::string& addr, uint16_t port, int tries, std::string* why) {
    for (int i = 0; i < std::max(1, tries); ++i) {
        const int p = port == 0 ? 0 : port + i;
        if (p > 65535) break;
        net::Fd fd = net::listenTcp(addr, uint16_t(p), why);
        if (!fd.valid()) continue;
        nonBlocking(fd.get());
        const int ep = ::epoll_create1(EPOLL_CLOEXEC);
        if (ep < 0) {
            *why = "epoll_create1 failed";
            return nullptr;
        }
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.fd = fd.get();
        ::epoll_ctl(ep, EPOLL_CTL_ADD, fd.get(), &ev);
        const uint16_t bound = net::boundPort(fd.get());
        return std::unique_ptr<HttpServer>(new HttpServer(std::move(fd), bound, ep));
    }
    return nullptr;
}

HttpServer::HttpServer(net::Fd listener, uint16_t port, int epoll)
    : listener_(std::move(listener)), port_(port), epoll_(epoll) {}

HttpServer::~HttpServer() {
    clients_.clear();
    ::close(epoll_);
}

void HttpServer::serve(int ms, const Handler& handler) {
    epoll_event events[32];
    const int n = ::epoll_wait(epoll_, events, 32, ms);
    for (int i = 0; i < n; ++i) {
        if (events[i].data.fd == listener_.get()) accept();
        else onEvent(events[i].data.fd, handler);
    }
    expire();
}

void HttpServer::accept() {
    for (;;) {
        const int fd = ::accept4(listener_.get(), nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) return;  // EAGAIN: all taken; anything else: try again on the next event
        if (clients_.size() >= kMaxClients) {  // a flood: refuse, keep serving the ones we have
            ::close(fd);
            continue;
        }
        Client& c = clients_[fd];
        c.fd = net::Fd(fd);
        c.deadline = std::chrono::steady_clock::now() + kRequestTime;
        epoll_event ev{};
        ev.events = EPOLLIN | EPOLLRDHUP;
        ev.data.fd = fd;
        ::epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &ev);
    }
}

void HttpServer::onEvent(int fd, const Handler& handler) {
    auto it = clients_.find(fd);
    if (it == clients_.end()) return;
    Client& c = it->second;
    if (c.answering) {
        if (!flush(c)) close(fd);
        return;
    }
    char buf[2048];
    for (;;) {
        const ssize_t got = ::recv(fd, buf, sizeof buf, 0);
        if (got > 0) {
            c.in.append(buf, size_t(got));
            if (c.in.size() > kMaxRequestBytes) break;
            continue;
        }
        if (got == 0 || (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR)) {
            close(fd);  // the client left before asking anything whole
            return;
        }
        if (errno != EINTR) break;
    }
    answer(c, handler);
    if (c.answering && !flush(c)) close(fd);
}

void HttpServer::answer(Client& c, const Handler& handler) {
    const ParsedRequest r = parseRequest(c.in);
    if (!r.complete && r.error == 0) return;  // more to come (within the deadline)
    HttpResponse resp;
    if (r.error != 0) {
        resp.status = r.error;
        resp.body = fmt::format("{} {}\n", r.error, reason(r.error));
    } else {
        resp = handler(r.path);
    }
    c.out = formatResponse(resp);
    c.answering = true;
    c.deadline = std::chrono::steady_clock::now() + kAnswerTime;
    epoll_event ev{};
    ev.events = EPOLLOUT | EPOLLRDHUP;
    ev.data.fd = c.fd.get();
    ::epoll_ctl(epoll_, EPOLL_CTL_MOD, c.fd.get(), &ev);
}

bool HttpServer::flush(Client& c) {
    while (c.sent < c.out.size()) {
        const ssize_t n = ::send(c.fd.get(), c.out.data() + c.sent, c.out.size() - c.sent, MSG_NOSIGNAL);
        if (n > 0) {
            c.sent += size_t(n);
            continue;
        }
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;
        if (n < 0 && errno == EINTR) continue;
        return false;
    }
    ::shutdown(c.fd.get(), SHUT_WR);
    return false;
}

void HttpServer::close(int fd) {
    ::epoll_ctl(epoll_, EPOLL_CTL_DEL, fd, nullptr);
    clients_.erase(fd);
}

// Clients past their deadline (slow to ask, or slow to read the answer) are cut off.
void HttpServer::expire() {
    const auto now = std::chrono::steady_clock::now();
    std::vector<int> late;
    for (const auto& [fd, c] : clients_)
        if (now > c.deadline) late.push_back(fd);
    for (int fd : late) close(fd);
}

}  // namespace hostccl::monitor
