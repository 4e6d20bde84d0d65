#include "core/net/acceptor.h"

#include <poll.h>
#include <sys/resource.h>

#include "common/detached_thread.h"
#include "common/env.h"
#include "common/log.h"
#include "common/thread_name.h"
#include "core/net/whitelist.h"

namespace hostccl::net {

namespace {
constexpr auto kHelloTimeout = std::chrono::milliseconds(2000);
constexpr size_t kMaxPending = 4096;  // beyond this, the oldest unclaimed are dropped
constexpr int kMaxReading = 256;      // connections being identified at once
constexpr int kMaxHandlers = 1024;    // served connections being handled at once
}  // namespace

Acceptor& Acceptor::instance() {
    static Acceptor* a = new Acceptor;  // lives for the process; its thread never joins
    return *a;
}

// Links open on demand and a root serves every rank's rendezvous connection: the
// soft descriptor limit is raised to the hard one, as NCCL does for its root.
static void raiseDescriptorLimit() {
    rlimit files{};
    if (getrlimit(RLIMIT_NOFILE, &files) != 0 || files.rlim_cur >= files.rlim_max) return;
    files.rlim_cur = files.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &files) != 0) log::warn("could not raise the descriptor limit to {}", files.rlim_max);
}

Acceptor::Acceptor() {
    raiseDescriptorLimit();
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
    nameThisThread("hccl-acceptor");
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
    startDetached([this, fd = std::move(fd)]() mutable {
        Hello hello{};
        std::string err;
        bool ok = readHello(fd.get(), &hello, Deadline::after(kHelloTimeout), &err);
        if (!ok) log::warn("dropped a connection from {}: {}", peerIp(fd.get()), err);
        std::unique_lock<std::mutex> lock(mutex_);
        --reading_;
        if (!ok) return;
        if (std::shared_ptr<Service> s = serviceFor(hello)) {
            if (!reserveHandler(s)) return;
            lock.unlock();
            runHandler(s, std::move(fd), hello);
            return;
        }
        // A notice for a rank whose session here has ended is refused at once: its
        // sender then covers that rank's part of the broadcast itself instead of
        // waiting for an answer that never comes. One for a rank whose session has
        // not started yet (it is still creating its communicator) is kept like any
        // early connection, and handed over when the session starts; its sender
        // covers the subtree after its step.
        if (ended_.contains(ServiceKeyT{hello.commId, hello.toRank, hello.purpose})) return;
        if (handToWaiter(hello, fd)) return;
        if (pending_.size() >= kMaxPending) pending_.pop_front();
        pending_.push_back(Pending{hello, std::move(fd), Deadline::Clock::now()});
    });
}

bool Acceptor::handToWaiter(const Hello& hello, Fd& fd) {
    auto range = waiters_.equal_range(ServiceKeyT{hello.commId, hello.toRank, hello.purpose});
    for (auto it = range.first; it != range.second; ++it) {
        Waiter* w = it->second;
        if (w->fromRank != kAnyRank && w->fromRank != hello.fromRank) continue;
        w->fd = std::move(fd);
        w->hello = hello;
        waiters_.erase(it);
        w->wake.notify_one();
        return true;
    }
    return false;
}

std::shared_ptr<Acceptor::Service> Acceptor::serviceFor(const Hello& h) {
    auto it = byKey_.find(ServiceKeyT{h.commId, h.toRank, h.purpose});
    return it == byKey_.end() ? nullptr : it->second;
}

bool Acceptor::reserveHandler(const std::shared_ptr<Service>& s) {
    if (handling_ >= kMaxHandlers) {
        log::warn("too many connections being set up at once; dropped one for comm {:016x} rank {}", s->commId,
                  s->toRank);
        return false;
    }
    ++handling_;
    ++s->running;
    return true;
}

void Acceptor::runHandler(const std::shared_ptr<Service>& s, Fd fd, const Hello& hello) {
    s->handler(std::move(fd), hello);
    std::lock_guard<std::mutex> lock(mutex_);
    --handling_;
    --s->running;
    handlerDone_.notify_all();
}

uint64_t Acceptor::serve(uint64_t commId, uint32_t toRank, Purpose purpose, Handler handler) {
    auto s = std::make_shared<Service>(Service{commId, toRank, static_cast<uint16_t>(purpose), std::move(handler)});
    std::lock_guard<std::mutex> lock(mutex_);
    const uint64_t ticket = nextTicket_++;
    services_[ticket] = s;
    byKey_.emplace(ServiceKeyT{commId, toRank, s->purpose}, s);  // the first service of a key keeps it
    ended_.forget(ServiceKeyT{commId, toRank, s->purpose});
    for (auto it = pending_.begin(); it != pending_.end();) {  // those that came before the service
        if (serviceFor(it->hello) != s || !reserveHandler(s)) {
            ++it;
            continue;
        }
        startDetached([this, s, fd = std::move(it->fd), hello = it->hello]() mutable {
            runHandler(s, std::move(fd), hello);
        });
        it = pending_.erase(it);
    }
    return ticket;
}

void Acceptor::unserve(uint64_t ticket) {
    std::unique_lock<std::mutex> lock(mutex_);
    auto it = services_.find(ticket);
    if (it == services_.end()) return;
    std::shared_ptr<Service> s = it->second;
    s->ended = true;
    services_.erase(it);
    const ServiceKeyT k{s->commId, s->toRank, s->purpose};
    auto key = byKey_.find(k);
    if (key != byKey_.end() && key->second == s) byKey_.erase(key);
    if (s->purpose == static_cast<uint16_t>(Purpose::Notice)) ended_.remember(k);
    handlerDone_.wait(lock, [&] { return s->running == 0; });
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
    for (auto it = pending_.begin(); it != pending_.end(); ++it) {  // it came before the claim
        const Hello& h = it->hello;
        if (h.commId == commId && h.toRank == toRank && (fromRank == kAnyRank || h.fromRank == fromRank) &&
            h.purpose == static_cast<uint16_t>(purpose)) {
            *hello = h;
            Fd fd = std::move(it->fd);
            pending_.erase(it);
            return fd;
        }
    }
    Waiter w{fromRank, {}, Fd(), Hello{}};
    auto entry = waiters_.emplace(ServiceKeyT{commId, toRank, static_cast<uint16_t>(purpose)}, &w);
    while (!w.fd.valid() && !deadline.expired()) {
        if (deadline.isNever())
            w.wake.wait(lock);
        else
            w.wake.wait_until(lock, deadline.at());
    }
    if (!w.fd.valid()) {  // still filed: nobody handed it a connection
        waiters_.erase(entry);
        return Fd();
    }
    *hello = w.hello;
    return std::move(w.fd);
}

}  // namespace hostccl::net
