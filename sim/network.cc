#include "sim/network.h"

#include <algorithm>
#include <cstdint>

namespace hostccl::sim {

size_t Network::Cores::soonest(Time from, double seconds, size_t except, Time* at) const {
    size_t best = except == 0 && core.size() > 1 ? 1 : 0;
    *at = 1e300;
    for (size_t k = 0; k < core.size(); ++k) {
        if (k == except && core.size() > 1) continue;
        const Time t = core[k].earliestFit(from, seconds);
        if (t < *at) *at = t, best = k;
    }
    return best;
}

Network::Network(const Platform& p) : p_(p), rates_(p.ratesFor(0)) {
    cores_.assign(p.hosts, Cores{std::vector<Calendar>(p.cores())});
    nicOut_.assign(p.hosts, Calendar());
    nicIn_.assign(p.hosts, Calendar());
    const uint32_t leaves = p.hostsPerSwitch == 0 ? 1 : (p.hosts + p.hostsPerSwitch - 1) / p.hostsPerSwitch;
    leafUp_.assign(leaves, Calendar());
    leafDown_.assign(leaves, Calendar());
    if (p.hostsPerSwitch > 0 && p.nicBytesPerSec > 0)
        leafBytesPerSec_ = p.hostsPerSwitch * p.nicBytesPerSec / p.oversubscription;
}

void Network::reset() {
    for (Cores& c : cores_)
        for (Calendar& k : c.core) k.clear();
    for (auto* v : {&nicOut_, &nicIn_, &leafUp_, &leafDown_})
        for (Calendar& c : *v) c.clear();
}

void Network::forgetBefore(Time t) {
    for (Cores& c : cores_)
        for (Calendar& k : c.core) k.forgetBefore(t);
    for (auto* v : {&nicOut_, &nicIn_, &leafUp_, &leafDown_})
        for (Calendar& c : *v) c.forgetBefore(t);
}

Time Network::work(uint32_t host, double seconds, Time ready) {
    if (seconds <= 0) return ready;
    seconds /= p_.coreSpeed;
    Cores& c = cores_[host];
    Time start = 0;
    const size_t k = c.soonest(ready, seconds, SIZE_MAX, &start);
    c.core[k].reserve(start, seconds);
    return start + seconds;
}

double Network::alphaOf(const LinkModel& link) const {
    return p_.crowded() && link.alphaCrowded > 0 ? link.alphaCrowded : link.alpha;
}

// The message in chunks, each in the earliest gap that fits on every calendar of its
// path (NICs, and leaf links when it crosses leaves), after the chunk before it at the
// flow's own pace: flows
// sharing a NIC interleave as TCP's do, and a flow waiting for a busy receiver leaves
// its sender's gaps to others. `*start` becomes the first chunk's start; returns the
// last chunk's end.
Time Network::reserveWire(uint32_t from, uint32_t to, double bytes, double flowPerByte, bool leafCrossing, Time* start) {
    constexpr double kChunkBytes = 256 * 1024, kMostChunks = 64;
    const double chunk = std::max(kChunkBytes, bytes / kMostChunks);
    const double nicRate = p_.nicBytesPerSec > 0 ? p_.nicBytesPerSec : 0;
    Calendar* path[4] = {nullptr, nullptr, nullptr, nullptr};
    double rate[4] = {0, 0, 0, 0};
    size_t hops = 0;
    if (nicRate > 0) path[hops] = &nicOut_[from], rate[hops++] = nicRate, path[hops] = &nicIn_[to], rate[hops++] = nicRate;
    if (leafCrossing) {
        path[hops] = &leafUp_[leafOf(from)], rate[hops++] = leafBytesPerSec_;
        path[hops] = &leafDown_[leafOf(to)], rate[hops++] = leafBytesPerSec_;
    }
    Time cursor = *start, end = *start;
    for (double left = bytes; left > 0; left -= chunk) {
        const double part = std::min(chunk, left);
        Time t = cursor;
        for (Time before = -1; before != t;) {  // until every hop has a gap at t
            before = t;
            for (size_t h = 0; h < hops; ++h) t = path[h]->earliestFit(t, part / rate[h]);
        }
        if (left == bytes) *start = t;
        double longest = 0;
        for (size_t h = 0; h < hops; ++h) {
            path[h]->reserve(t, part / rate[h]);
            longest = std::max(longest, part / rate[h]);
        }
        end = t + longest;
        cursor = t + std::max(longest, part * flowPerByte);  // the flow's own pace
    }
    return end;
}

MessageTiming Network::transfer(uint32_t src, uint32_t dst, uint64_t bytes, Time ready, bool fusedReduce) {
    const uint32_t from = p_.hostOf(src), to = p_.hostOf(dst);
    const bool local = from == to;
    const LinkModel& link = local ? rates_.shm : rates_.net;
    const double b = static_cast<double>(bytes);
    const double perByte = fusedReduce ? std::max(link.beta, rates_.gamma) : link.beta;
    // The resources on the path: cores at both ends (a transfer's CPU part; a single
    // copy is all the receiver's), and across hosts the NICs and, between leaves,
    // the uplink and downlink.
    const bool single = p_.singleCopy(src, dst, bytes);
    const double cpuOutSeconds = (single ? 0 : b * perByte * link.cpuShare) / p_.coreSpeed;
    const double cpuInSeconds = single ? b * perByte / p_.coreSpeed : cpuOutSeconds;
    Cores& cpuOut = cores_[from];
    Cores& cpuIn = cores_[to];
    const bool oneHost = &cpuIn == &cpuOut;
    const double seconds = b * perByte;
    const bool leafCrossing = !local && leafBytesPerSec_ > 0 && leafOf(from) != leafOf(to);
    const bool nicLimited = !local && p_.nicBytesPerSec > 0;
    // The wire first (between hosts it sets the start), then a core at each end for
    // the CPU part, at the earliest time both have it (on one host: the message
    // waits for them; a host with one core does both parts on it).
    Time start = ready;
    const Time wireEnd = nicLimited || leafCrossing ? reserveWire(from, to, b, perByte, leafCrossing, &start) : 0;
    size_t coreOut = 0, coreIn = 0;
    const bool sameCore = oneHost && cpuOutSeconds > 0 && cpuIn.core.size() == 1;
    for (Time before = -1; before != start;) {
        before = start;
        Time tOut = start, tIn = start;
        if (cpuOutSeconds > 0) coreOut = cpuOut.soonest(start, cpuOutSeconds + (sameCore ? cpuInSeconds : 0), SIZE_MAX, &tOut);
        if (cpuInSeconds > 0 && !sameCore)
            coreIn = cpuIn.soonest(start, cpuInSeconds, oneHost && cpuOutSeconds > 0 ? coreOut : SIZE_MAX, &tIn);
        const Time both = std::max(tOut, tIn);
        if (!local) break;  // across hosts the wire keeps its slot; the cores take theirs
        start = both;
    }
    auto hold = [](Cores& c, size_t k, Time from, double length) {
        if (length <= 0) return from;
        const Time at = c.core[k].earliestFit(from, length);
        c.core[k].reserve(at, length);
        return at + length;
    };
    const Time outDone = hold(cpuOut, coreOut, start, cpuOutSeconds + (sameCore ? cpuInSeconds : 0));
    const Time inDone = sameCore ? outDone : hold(cpuIn, coreIn, start, cpuInSeconds);
    // On one host both parts start with the message and end within it; across hosts a
    // core busy with other work holds the message back (its kernel work waits).
    const Time sent = std::max({start + seconds, wireEnd, outDone});
    return MessageTiming{start, sent, std::max({sent + alphaOf(link), inDone, ready + link.step})};
}

}  // namespace hostccl::sim
