#include "monitor/diagnosis.h"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <set>

namespace hostccl::monitor {

const char* kindName(Finding::Kind k) {
    switch (k) {
        case Finding::Kind::Straggler: return "straggler";
        case Finding::Kind::SlowLink: return "slow_link";
        case Finding::Kind::Stuck: return "stuck";
    }
    return "unknown";
}

namespace {
Finding about(const CommSnapshot& s, Finding::Kind kind, int64_t peer, std::string who) {
    Finding f;
    f.kind = kind;
    f.comm = s.comm;
    f.commId = s.commId;
    f.rank = s.rank;
    f.peer = peer;
    f.who = std::move(who);
    return f;
}

std::string nameOf(const CommSnapshot& s, int64_t peer) {
    for (const WaitSnapshot& w : s.waits)
        if (int64_t(w.peer) == peer) return w.who;
    for (const LinkSnapshot& l : s.links)
        if (int64_t(l.peer) == peer) return l.who;
    return peer >= 0 ? fmt::format("rank {}", peer) : "";
}
}  // namespace

std::vector<Finding> Diagnosis::update(const std::vector<CommSnapshot>& snaps, int64_t nowUs) {
    std::vector<Finding> now;
    for (const CommSnapshot& s : snaps) {
        straggler(s, &now);
        slowLinks(s, &now);
        stuck(s, nowUs, &now);
    }
    std::map<Key, Finding> next;
    for (const Finding& f : now) next[Key{int(f.kind), f.commId, f.rank, f.peer}] = f;
    appeared_.clear();
    cleared_.clear();
    for (const auto& [k, f] : next)
        if (current_.count(k) == 0) appeared_.push_back(f);
    for (const auto& [k, f] : current_)
        if (next.count(k) == 0) cleared_.push_back(f);
    current_ = std::move(next);
    forgetGone(snaps);
    return now;
}

// Communicators destroyed since the last look leave no state behind (a process that
// makes and destroys sub-communicators all its life would otherwise grow it).
void Diagnosis::forgetGone(const std::vector<CommSnapshot>& snaps) {
    std::set<std::pair<uint64_t, uint32_t>> live;
    for (const CommSnapshot& s : snaps) live.insert({s.commId, s.rank});
    for (auto it = progress_.begin(); it != progress_.end();)
        it = live.count(it->first) ? std::next(it) : progress_.erase(it);
    for (auto it = links_.begin(); it != links_.end();)
        it = live.count({std::get<0>(it->first), std::get<1>(it->first)}) ? std::next(it) : links_.erase(it);
}

// The peer this rank waited for last, past the threshold, in most recent collectives.
void Diagnosis::straggler(const CommSnapshot& s, std::vector<Finding>* out) const {
    if (s.recent.size() < settings_.minRecentOps) return;
    std::map<int64_t, std::vector<uint64_t>> lateBy;
    for (const RecentOp& op : s.recent)
        if (op.latePeer >= 0) lateBy[op.latePeer].push_back(op.waitedUs);
    for (auto& [peer, waits] : lateBy) {
        if (waits.size() * 2 <= s.recent.size()) continue;
        std::nth_element(waits.begin(), waits.begin() + long(waits.size() / 2), waits.end());
        Finding f = about(s, Finding::Kind::Straggler, peer, nameOf(s, peer));
        f.value = double(waits[waits.size() / 2]) / 1000;
        f.reference = double(waits.size());
        f.text = fmt::format("straggler: {} of comm {} arrived last at {} of the last {} collectives, {:.1f} ms after "
                             "rank {} (median; threshold {:.1f} ms)",
                             f.who, s.comm, waits.size(), s.recent.size(), f.value, s.rank, double(s.lateUs) / 1000);
        out->push_back(std::move(f));
    }
}

// Bulk receives per link over windows of at least slowWindowBytes, against the model.
void Diagnosis::slowLinks(const CommSnapshot& s, std::vector<Finding>* out) {
    for (const LinkSnapshot& l : s.links) {
        LinkWindow& w = links_[{s.commId, s.rank, l.peer}];
        if (l.timedBytes < w.bytes || l.timedNs < w.ns) w = LinkWindow{};  // a new link in an old one's place
        const uint64_t bytes = l.timedBytes - w.bytes, ns = l.timedNs - w.ns;
        if (bytes >= settings_.slowWindowBytes && ns > 0) {
            w.rate = double(bytes) / double(ns) * 1e9;
            w.slow = l.expectedBytesPerSec > 0 && w.rate < settings_.slowRatio * l.expectedBytesPerSec;
            w.bytes = l.timedBytes;
            w.ns = l.timedNs;
        }
        if (!w.slow) continue;
        Finding f = about(s, Finding::Kind::SlowLink, l.peer, l.who);
        f.value = w.rate / 1e9;
        f.reference = l.expectedBytesPerSec / 1e9;
        f.text = fmt::format("slow link: {} -> rank {} of comm {} ({}) moves {:.3f} GB/s, below {:.0f} % of the "
                             "{:.3f} GB/s the cost model expects",
                             l.who, s.rank, s.comm, l.kind, f.value, 100 * settings_.slowRatio, f.reference);
        out->push_back(std::move(f));
    }
}

// A collective in flight whose sequence number and progress count stay put.
void Diagnosis::stuck(const CommSnapshot& s, int64_t nowUs, std::vector<Finding>* out) {
    Progress& p = progress_[{s.commId, s.rank}];
    const CommMetrics::Running& r = s.running;
    if (!r.running || !p.running || r.seq != p.seq || r.progress != p.progress) {
        p = Progress{r.seq, r.progress, r.running, nowUs};
        return;
    }
    const double idle = double(nowUs - p.sinceUs) / 1e6;
    if (idle < settings_.stuckSeconds) return;
    Finding f = about(s, Finding::Kind::Stuck, r.waitingOn, s.waitingOnWho);
    f.value = idle;
    f.reference = double(r.seq);
    f.text = fmt::format("stuck: {} seq {} of comm {} has moved nothing for {:.0f} s on rank {}{}", collName(r.type),
                         r.seq, s.comm, idle, s.rank,
                         f.who.empty() ? "" : fmt::format(", waiting for {}", f.who));
    out->push_back(std::move(f));
}

}  // namespace hostccl::monitor
