// Live measurements of one communicator (docs/monitoring.md): per collective its
// count, bytes and a histogram of durations; the op in flight and how far it has
// got; how long this rank waited, at each op's first wait, for the peer that came
// last (arrival skew: a straggler is the peer others wait for). Link bytes and
// timings live on the links (transports/link.h, LinkCounters).
// One thread at a time runs a communicator's ops and is the only writer; the
// monitor's thread reads at any moment. Every field is a relaxed atomic written by
// a load and a store, so measuring costs no locked instruction on the op's path.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "algorithms/context.h"
#include "common/coll_type.h"
#include "hccl/hccl_types.h"

namespace hostccl::monitor {

// Upper bounds of the duration histogram's buckets, seconds (then +Inf).
constexpr std::array<double, 8> kDurationBounds = {1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1, 10, 100};
constexpr size_t kDurationBuckets = kDurationBounds.size() + 1;
constexpr size_t kCollTypes = size_t(CollType::Barrier) + 1;  // indexed by CollType's value
// The ops remembered for straggler diagnosis.
constexpr size_t kRecentOps = 16;

inline void bump(std::atomic<uint64_t>& c, uint64_t v = 1) {
    c.store(c.load(std::memory_order_relaxed) + v, std::memory_order_relaxed);
}

struct OpTypeStats {
    std::atomic<uint64_t> ops{0}, failed{0}, bytes{0}, durationUs{0};
    std::array<std::atomic<uint64_t>, kDurationBuckets> buckets{};  // per bucket, not cumulative
};

// How long this rank waited for one peer, summed over the ops whose first wait it
// ended (the peer that came last).
struct PeerWaits {
    explicit PeerWaits(uint32_t p) : peer(p) {}
    const uint32_t peer;
    std::atomic<uint64_t> times{0}, waitedUs{0}, late{0};  // late: waits above the straggler threshold
};

// One op of the recent history: who this rank waited for last at its first wait
// (-1: nobody, or less than the threshold) and how long.
struct RecentOp {
    int64_t seq = 0;
    int64_t latePeer = -1;
    uint64_t waitedUs = 0;
};

// On cache lines of its own: the op's thread writes it on every op, and a line shared
// with what callers read (the communicator's neighbouring members) would cross cores
// twice per op.
class alignas(64) CommMetrics {
public:
    // Waits longer than `lateUs` count as a peer being late (HOSTCCL_STRAGGLER_MS).
    explicit CommMetrics(uint64_t lateUs) : lateUs_(lateUs) {}
    CommMetrics(const CommMetrics&) = delete;
    CommMetrics& operator=(const CommMetrics&) = delete;

    // What the op's waits report (CommView::watch).
    OpWatch* watch() { return &watch_; }
    // The op's thread, around each op (`nowUs`: wall clock, microseconds).
    void opStarted(CollType type, uint64_t seq, int64_t nowUs);
    void opEnded(CollType type, uint64_t bytes, HcclResult rc, int64_t nowUs);

    struct Running {
        bool running = false;
        CollType type = CollType::AllReduce;
        uint64_t seq = 0;
        int64_t startedUs = 0;
        int64_t waitingOn = -1;  // the peer its wait sleeps on
        uint64_t progress = 0;   // changes while bytes move
    };
    // Any thread.
    Running running() const;
    uint64_t lastSeq() const { return seq_.load(std::memory_order_relaxed); }
    const OpTypeStats& stats(CollType t) const { return byType_[size_t(t)]; }
    // Oldest first, at most kRecentOps.
    std::vector<RecentOp> recent() const;
    // Every peer this rank has waited for (a few: the peers of its algorithms' first steps).
    std::vector<std::shared_ptr<const PeerWaits>> peerWaits() const;
    uint64_t lateUs() const { return lateUs_; }

private:
    PeerWaits& waitsFor(uint32_t peer);
    void remember(uint64_t seq, int64_t latePeer, uint64_t waitedUs);

    const uint64_t lateUs_;
    OpWatch watch_;
    std::array<OpTypeStats, kCollTypes> byType_{};
    std::atomic<uint64_t> seq_{0};
    std::atomic<bool> running_{false};
    std::atomic<uint8_t> runningType_{0};
    std::atomic<int64_t> startedUs_{0};
    // A ring of the last kRecentOps ops (slot = count % kRecentOps).
    std::array<std::atomic<int64_t>, kRecentOps> recentSeq_{}, recentPeer_{};
    std::array<std::atomic<uint64_t>, kRecentOps> recentWaitUs_{};
    std::atomic<uint64_t> recentCount_{0};
    mutable std::mutex peersMutex_;  // guards the vector (growth), not the counters
    std::vector<std::shared_ptr<PeerWaits>> peers_;
};

}  // namespace hostccl::monitor
