// Copies what a communicator has measured into a CommSnapshot (snapshot.h), on the
// monitor's thread, while the communicator's ops run on: every number read here is
// a relaxed atomic with one writer, so the copy never stops an op.
#include <algorithm>

#include "algorithms/cost_model/cost_model.h"
#include "algorithms/selector.h"
#include "core/comm.h"
#include "core/flight_recorder.h"

namespace hostccl {

namespace {
uint64_t read(const std::atomic<uint64_t>& c) { return c.load(std::memory_order_relaxed); }

// The cost model's figures for the link from this rank to `peer` (null: none).
const LinkCost* modelled(const CommView& view, uint32_t peer) {
    if (!view.costs) return nullptr;
    const CostModel& model = modelOf(*view.costs);
    if (peer >= model.ranks() || view.rank >= model.ranks()) return nullptr;
    return &model.params().of(model.classOf(view.rank, peer));
}
}  // namespace

monitor::CommSnapshot Comm::snapshot() const {
    monitor::CommSnapshot s;
    s.comm = name();
    s.commId = id();
    s.rank = rank();
    s.size = size();
    s.host = peers_[rank()].hostId;
    s.pid = peers_[rank()].pid;
    s.takenUs = FlightRecorder::wallUs();
    s.peers = table_;
    for (size_t t = 1; t < monitor::kCollTypes; ++t) {
        const monitor::OpTypeStats& st = metrics_.stats(CollType(t));
        if (read(st.ops) == 0) continue;
        monitor::OpTypeSnapshot o;
        o.type = CollType(t);
        o.ops = read(st.ops);
        o.failed = read(st.failed);
        o.bytes = read(st.bytes);
        o.durationUs = read(st.durationUs);
        for (size_t b = 0; b < monitor::kDurationBuckets; ++b) o.buckets[b] = read(st.buckets[b]);
        s.ops.push_back(o);
    }
    s.running = metrics_.running();
    if (s.running.running && s.running.waitingOn >= 0 && uint32_t(s.running.waitingOn) < size())
        s.waitingOnWho = whoIs(uint32_t(s.running.waitingOn));
    s.lastSeq = metrics_.lastSeq();
    const uint64_t finished = opsFinished_.load();
    s.inflight = opsEnqueued_.load() - finished;
    s.failed = failure_.failed();
    s.recent = metrics_.recent();
    s.lateUs = metrics_.lateUs();
    for (const auto& w : metrics_.peerWaits()) {
        if (w->peer >= size()) continue;
        s.waits.push_back({w->peer, whoIs(w->peer), read(w->times), read(w->waitedUs), read(w->late)});
    }
    if (links_) {
        links_->forEach([&](transport::Link& l) {
            const transport::LinkCounters& c = l.counters();
            monitor::LinkSnapshot k;
            k.peer = l.peer();
            k.kind = l.kind();
            k.sentBytes = read(c.sentBytes);
            k.receivedBytes = read(c.receivedBytes);
            k.sends = read(c.sends);
            k.receives = read(c.receives);
            k.timedBytes = read(c.timedBytes);
            k.timedNs = read(c.timedNs);
            k.roundTripUs = l.roundTripUs();
            s.links.push_back(std::move(k));
        });
    }
    // Names and the model's rates outside the link table's lock.
    for (monitor::LinkSnapshot& k : s.links) {
        k.who = k.peer < size() ? whoIs(k.peer) : "";
        if (const LinkCost* cost = modelled(view_, k.peer)) {
            k.expectedBytesPerSec = cost->beta > 0 ? 1 / cost->beta : 0;
            k.expectedLatencyUs = cost->alpha * 1e6;
        }
    }
    return s;
}

namespace monitor {
std::vector<CommSnapshot> snapshotAll() {
    std::vector<CommSnapshot> out;
    forEachLiveComm([&](const Comm& c) { out.push_back(c.snapshot()); });
    return out;
}
}  // namespace monitor

}  // namespace hostccl
