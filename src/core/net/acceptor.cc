#include "core/net/acceptor.h"

#include <poll.h>

#include "common/env.h"
#include "common/log.h"
#include "core/net/whitelist.h"

namespace hostccl::net {

namespace {
constexpr auto kHelloTimeout = std::chrono::milliseconds(2000);
constexpr size_t kMaxPending = 4096;  // beyond this, the oldest unclaimed are dropped
constexpr int kMaxReading = 256;      // connections being identified at once
}  // namespace

Acceptor& Acceptor::instance() {
    static Acceptor* a = new Acceptor;  // lives for the process; its thread never joins
    return *a;
}

Acceptor::Acceptor() {
    listener_ = listenTcp("", 0, &startError_);
    if (!listener_.valid()) {
        log::error("peer listener could not start: {}", startError_);
        return;
    }
    port_ = boundPort(listener_.get());
    thread_ = std::thread([this] { run(); });
    thread_.detach();
}

void Acceptor::run() {
    for (;;) {
        std::string err;
        Fd fd = acceptTcp(listener_.get(), Deadline::after(std::chrono::milliseconds(500)), &err);
        purgeStale();
        if (!fd.valid()) continue;
        if (!whitelistAdmits(peerIp(fd.get()))) {
            log::warn("dropped a connection from {}: not in HCCL_WHITELIST_FILE", peerIp(fd.get()));
            continue;
        }
        readHelloAsync(std::move(fd));
    }
}

// Each new connection's Hello is read on its own short-lived thread, so a silent
// client cannot hold up the connections behind it.
void Acceptor::readHelloAsync(Fd fd) {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        if (reading_ >= kMaxReading) {
            log::warn("too many connections still to identify; dropped one from {}", peerIp(fd.get()));
            return;
        }
        ++reading_;
    }
    std::thread([this, fd = std::move(fd)]() mutable {
        Hello hello{};
        std::string err;
        bool ok = readHello(fd.get(), &hello, Deadline::after(kHelloTimeout), &err);
        if (!ok) log::warn("dropped a connection from {}: {}", peerIp(fd.get()), err);
        std::lock_guard<std::mutex> lock(mutex_);
        --reading_;
        if (!ok) return;
        if (pending_.size() >= kMaxPending) pending_.pop_front();
        pending_.push_back(Pending{hello, std::move(fd), Deadline::Clock::now()});
        arrived_.notify_all();
    }).detach();
}

// Unclaimed connections are kept for the connect timeout, then dropped.
void Acceptor::purgeStale() {
    static const auto keep = std::chrono::seconds(env::getInt("HCCL_CONNECT_TIMEOUT", 1, 7200) + 20);
    auto now = Deadline::Clock::now();
    std::lock_guard<std::mutex> lock(mutex_);
    while (!pending_.empty() && now - pending_.front().arrived > keep) pending_.pop_front();
}

Fd Acceptor::claim(uint64_t commId, uint32_t toRank, uint32_t fromRank, Purpose purpose, Deadline deadline,
                   Hello* hello) {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
        for (auto it = pending_.begin(); it != pending_.end(); ++it) {
            const Hello& h = it->hello;
            if (h.commId == commId && h.toRank == toRank && (fromRank == kAnyRank || h.fromRank == fromRank) &&
                h.purpose == static_cast<uint16_t>(purpose)) {
                *hello = h;
                Fd fd = std::move(it->fd);
                pending_.erase(it);
                return fd;
            }
        }
        if (deadline.expired()) return Fd();
        if (deadline.isNever())
            arrived_.wait(lock);
        else
            arrived_.wait_until(lock, deadline.at());
    }
}

}  // namespace hostccl::net
