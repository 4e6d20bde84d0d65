#include "core/metrics/comm_metrics.h"

#include <algorithm>

namespace hostccl::monitor {

namespace {
size_t bucketOf(uint64_t us) {
    const double s = double(us) * 1e-6;
    size_t b = 0;
    while (b < kDurationBounds.size() && s > kDurationBounds[b]) ++b;
    return b;
}
}  // namespace

void CommMetrics::opStarted(CollType type, uint64_t seq, int64_t nowUs) {
    watch_.arrivalNs = 0;
    watch_.latePeer = -1;
    runningType_.store(uint8_t(type), std::memory_order_relaxed);
    startedUs_.store(nowUs, std::memory_order_relaxed);
    if (seq != 0) seq_.store(seq, std::memory_order_relaxed);
    running_.store(true, std::memory_order_release);
}

void CommMetrics::opEnded(CollType type, uint64_t bytes, HcclResult rc, int64_t nowUs) {
    running_.store(false, std::memory_order_relaxed);
    OpTypeStats& s = byType_[size_t(type)];
    const uint64_t us = uint64_t(std::max<int64_t>(0, nowUs - startedUs_.load(std::memory_order_relaxed)));
    bump(s.ops);
    if (rc != HCCL_SUCCESS) bump(s.failed);
    bump(s.bytes, bytes);
    bump(s.durationUs, us);
    bump(s.buckets[bucketOf(us)]);
    if (isPointToPoint(type)) return;  // who waits for whom is the pair's business
    const uint64_t waitedUs = watch_.arrivalNs / 1000;
    const bool late = watch_.latePeer >= 0 && waitedUs > lateUs_;
    if (watch_.latePeer >= 0 && watch_.arrivalNs != 0) {
        PeerWaits& p = waitsFor(uint32_t(watch_.latePeer));
        bump(p.times);
        bump(p.waitedUs, waitedUs);
        if (late) bump(p.late);
    }
    remember(seq_.load(std::memory_order_relaxed), late ? watch_.latePeer : -1, waitedUs);
}

void CommMetrics::remember(uint64_t seq, int64_t latePeer, uint64_t waitedUs) {
    const uint64_t n = recentCount_.load(std::memory_order_relaxed);
    const size_t slot = n % kRecentOps;
    recentSeq_[slot].store(int64_t(seq), std::memory_order_relaxed);
    recentPeer_[slot].store(latePeer, std::memory_order_relaxed);
    recentWaitUs_[slot].store(waitedUs, std::memory_order_relaxed);
    recentCount_.store(n + 1, std::memory_order_release);
}

std::vector<RecentOp> CommMetrics::recent() const {
    const uint64_t n = recentCount_.load(std::memory_order_acquire);
    std::vector<RecentOp> out;
    for (uint64_t i = n > kRecentOps ? n - kRecentOps : 0; i < n; ++i) {
        const size_t slot = i % kRecentOps;
        out.push_back({recentSeq_[slot].load(std::memory_order_relaxed), recentPeer_[slot].load(std::memory_order_relaxed),
                       recentWaitUs_[slot].load(std::memory_order_relaxed)});
    }
    return out;
}

CommMetrics::Running CommMetrics::running() const {
    Running r;
    r.running = running_.load(std::memory_order_acquire);
    r.type = CollType(runningType_.load(std::memory_order_relaxed));
    r.seq = seq_.load(std::memory_order_relaxed);
    r.startedUs = startedUs_.load(std::memory_order_relaxed);
    r.waitingOn = watch_.waitingOn.load(std::memory_order_relaxed);
    r.progress = watch_.progress.load(std::memory_order_relaxed);
    return r;
}

// The op's thread only; the lock keeps the vector whole for readers.
PeerWaits& CommMetrics::waitsFor(uint32_t peer) {
    for (const auto& p : peers_)
        if (p->peer == peer) return *p;
    std::lock_guard<std::mutex> lock(peersMutex_);
    peers_.push_back(std::make_shared<PeerWaits>(peer));
    return *peers_.back();
}

std::vector<std::shared_ptr<const PeerWaits>> CommMetrics::peerWaits() const {
    std::lock_guard<std::mutex> lock(peersMutex_);
    return {peers_.begin(), peers_.end()};
}

}  // namespace hostccl::monitor
