// The thread that drives every health session of the process (health_session.h):
// it waits in epoll on all their channels, hands arriving bytes to their session,
// and every heartbeat interval lets each session send heartbeats and check which
// peers went silent. One thread for the whole process, however many communicators;
// it also serves SIGUSR1's request for flight-recorder dumps.
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <thread>
#include <map>
#include <unordered_map>
#include <vector>

#include "common/recent_keys.h"
#include "core/health/health_frame.h"

namespace hostccl::health {

class HealthSession;

class HealthMonitor {
public:
    // Started on first use (again in a forked child, whose copy has no thread).
    static HealthMonitor& instance();
    // Guards every session's state.
    std::mutex& mutex() { return mutex_; }
    void add(HealthSession* s);
    // Watches `s`'s channel `i`, added after add(s) (the lock held).
    void watch(HealthSession* s, size_t i);
    // When this returns the monitor no longer touches `s`.
    void remove(HealthSession* s);
    // The session of rank `rank` of communicator `commId` in this process, or null
    // (the lock held).
    HealthSession* find(uint64_t commId, uint32_t rank) const;
    // Hands a notice to rank `rank` of `commId` in this process (the lock held): to
    // its session, or, when that rank is still creating its communicator, to the
    // session it is about to add. False when that rank's session here has ended.
    bool deliver(uint64_t commId, uint32_t rank, const Frame& notice);

    // HOSTCCL_HEARTBEAT_INTERVAL and HOSTCCL_HEARTBEAT_TIMEOUT (0: silence is never a failure).
    static std::chrono::milliseconds interval();
    static std::chrono::milliseconds silenceLimit();
    static constexpr size_t kMaxEnded = 65536;  // ended sessions remembered; early notices kept at most

private:
    HealthMonitor();
    void run();
    void serve(uint64_t watchId, std::chrono::steady_clock::time_point now);

    struct Watch {
        HealthSession* session;
        size_t peer;
    };
    std::mutex mutex_;
    int epoll_ = -1;
    uint64_t nextWatch_ = 1;
    std::unordered_map<uint64_t, Watch> watches_;
    std::vector<HealthSession*> sessions_;
    std::map<std::pair<uint64_t, uint32_t>, HealthSession*> byRank_;
    // Notices for ranks whose session has not started (the first per rank), and the
    // ranks whose session ended, whose notices are not kept.
    std::map<std::pair<uint64_t, uint32_t>, Frame> early_;
    RecentKeys<std::pair<uint64_t, uint32_t>> ended_{kMaxEnded};
};

}  // namespace hostccl::health
