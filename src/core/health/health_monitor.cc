#include "core/health/health_monitor.h"

#include <sys/epoll.h>
#include <unistd.h>

#include <algorithm>

#include "common/env.h"
#include "common/log.h"
#include "common/thread_name.h"
#include "core/comm.h"
#include "core/flight_recorder.h"
#include "core/health/health_session.h"

namespace hostccl::health {

HealthMonitor& HealthMonitor::instance() {
    static std::mutex guard;
    static HealthMonitor* monitor = nullptr;
    static pid_t owner = 0;
    std::lock_guard<std::mutex> lock(guard);
    if (monitor == nullptr || owner != ::getpid()) {  // lives for the process; its thread never joins
        monitor = new HealthMonitor;
        owner = ::getpid();
    }
    return *monitor;
}

std::chrono::milliseconds HealthMonitor::interval() {
    static const auto ms = std::chrono::milliseconds(env::getInt("HOSTCCL_HEARTBEAT_INTERVAL", 10, 60000));
    return ms;
}

std::chrono::milliseconds HealthMonitor::silenceLimit() {
    static const auto s = std::chrono::milliseconds(1000 * env::getInt("HOSTCCL_HEARTBEAT_TIMEOUT", 0, 86400));
    return s;
}

HealthMonitor::HealthMonitor() {
    epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
    if (epoll_ < 0) log::error("health monitor: epoll_create1 failed; peer failures will only be seen by ops");
    std::thread([this] { run(); }).detach();
}

void HealthMonitor::add(HealthSession* s) {
    std::lock_guard<std::mutex> lock(mutex_);
    sessions_.push_back(s);
    const auto key = std::make_pair(s->commId(), s->rank());
    byRank_.emplace(key, s);  // a second claim of one rank is not reachable
    ended_.forget(key);
    for (size_t i = 0; i < s->peerCount(); ++i) watch(s, i);
    auto early = early_.find(key);
    if (early != early_.end()) {  // another rank of this process failed while this one was being created
        s->takeNotice(early->second);
        early_.erase(early);
    }
}

bool HealthMonitor::deliver(uint64_t commId, uint32_t rank, const Frame& notice) {
    const auto key = std::make_pair(commId, rank);
    if (HealthSession* s = find(commId, rank)) {
        s->takeNotice(notice);
        return true;
    }
    if (ended_.contains(key) || early_.size() >= kMaxEnded) return false;
    early_.emplace(key, notice);
    return true;
}

void HealthMonitor::watch(HealthSession* s, size_t i) {
    uint64_t id = nextWatch_++;
    watches_[id] = Watch{s, i};
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP;
    ev.data.u64 = id;
    if (epoll_ >= 0) ::epoll_ctl(epoll_, EPOLL_CTL_ADD, s->fdOf(i), &ev);
}

void HealthMonitor::remove(HealthSession* s) {
    std::lock_guard<std::mutex> lock(mutex_);
    sessions_.erase(std::remove(sessions_.begin(), sessions_.end(), s), sessions_.end());
    const auto key = std::make_pair(s->commId(), s->rank());
    auto mine = byRank_.find(key);
    if (mine != byRank_.end() && mine->second == s) byRank_.erase(mine);
    ended_.remember(key);
    for (auto it = watches_.begin(); it != watches_.end();) {
        if (it->second.session != s) {
            ++it;
            continue;
        }
        if (epoll_ >= 0) ::epoll_ctl(epoll_, EPOLL_CTL_DEL, s->fdOf(it->second.peer), nullptr);
        it = watches_.erase(it);
    }
}

HealthSession* HealthMonitor::find(uint64_t commId, uint32_t rank) const {
    auto it = byRank_.find({commId, rank});
    return it == byRank_.end() ? nullptr : it->second;
}

// An event may name a watch removed since epoll_wait returned: ids are never
// reused, so a stale one is simply not found.
void HealthMonitor::serve(uint64_t watchId, std::chrono::steady_clock::time_point now) {
    auto it = watches_.find(watchId);
    if (it == watches_.end()) return;
    HealthSession* s = it->second.session;
    size_t peer = it->second.peer;
    s->onReadable(peer, now);
    if (!s->watching(peer)) {  // the peer left or was lost: nothing more to read
        if (epoll_ >= 0) ::epoll_ctl(epoll_, EPOLL_CTL_DEL, s->fdOf(peer), nullptr);
        watches_.erase(it);
    }
}

void HealthMonitor::run() {
    nameThisThread("hccl-health");
    const auto tick = interval() / 2;  // a heartbeat is never later than half an interval
    auto nextTick = std::chrono::steady_clock::now();
    auto lastLoop = nextTick;
    epoll_event events[64];
    for (;;) {
        int n = epoll_ >= 0 ? ::epoll_wait(epoll_, events, 64, static_cast<int>(tick.count()))
                            : (std::this_thread::sleep_for(tick), 0);
        if (takeFlightRecorderRequest()) dumpAllFlightRecords("SIGUSR1");
        std::lock_guard<std::mutex> lock(mutex_);
        auto now = std::chrono::steady_clock::now();
        // This thread itself went unscheduled (the process was stopped, the machine
        // overloaded): the peers' heartbeats wait unread, so their silence is ours.
        const bool wasAway = now - lastLoop > 4 * interval();
        lastLoop = now;
        for (int i = 0; i < n; ++i) serve(events[i].data.u64, now);
        if (wasAway)
            for (HealthSession* s : sessions_) s->forgiveSilence(now);
        if (now < nextTick) continue;
        nextTick = now + tick;
        for (HealthSession* s : sessions_) s->tick(now);
    }
}

}  // namespace hostccl::health
