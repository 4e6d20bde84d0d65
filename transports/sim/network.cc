#include "transports/sim/network.h"

#include <algorithm>

namespace hostccl::sim {

size_t Network::Cores::earliest() const {
    return static_cast<size_t>(std::min_element(freeAt.begin(), freeAt.end()) - freeAt.begin());
}

Network::Network(const Platform& p) : p_(p), rates_(p.ratesFor(0)) {
    cores_.assign(p.hosts, Cores{std::vector<Time>(p.cores(), 0)});
    nicOut_.assign(p.hosts, 0);
    nicIn_.assign(p.hosts, 0);
    const uint32_t leaves = p.hostsPerSwitch == 0 ? 1 : (p.hosts + p.hostsPerSwitch - 1) / p.hostsPerSwitch;
    leafUp_.assign(leaves, 0);
    leafDown_.assign(leaves, 0);
    if (p.hostsPerSwitch > 0 && p.nicBytesPerSec > 0)
        leafBytesPerSec_ = p.hostsPerSwitch * p.nicBytesPerSec / p.oversubscription;
}

void Network::reset() {
    for (Cores& c : cores_) std::fill(c.freeAt.begin(), c.freeAt.end(), 0);
    for (auto* v : {&nicOut_, &nicIn_, &leafUp_, &leafDown_}) std::fill(v->begin(), v->end(), 0);
}

Time Network::work(uint32_t host, double seconds, Time ready) {
    if (seconds <= 0) return ready;
    Cores& c = cores_[host];
    const size_t k = c.earliest();
    const Time start = std::max(ready, c.freeAt[k]);
    c.freeAt[k] = start + seconds;
    return c.freeAt[k];
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
    const double cpuOutSeconds = single ? 0 : b * perByte * link.cpuShare;
    const double cpuInSeconds = single ? b * perByte : cpuOutSeconds;
    Cores& cpuOut = cores_[from];
    Cores& cpuIn = cores_[to];
    const size_t coreOut = cpuOut.earliest();
    Time start = std::max(ready, cpuOutSeconds > 0 ? cpuOut.freeAt[coreOut] : 0.0);
    size_t coreIn = cpuIn.earliest();
    if (cpuInSeconds > 0) {
        if (cpuOutSeconds > 0 && &cpuIn == &cpuOut && coreIn == coreOut) {  // both ends on one host: two cores if it has them
            Time second = 1e300;
            for (size_t k = 0; k < cpuIn.freeAt.size(); ++k)
                if (k != coreOut && cpuIn.freeAt[k] < second) second = cpuIn.freeAt[k], coreIn = k;
        }
        start = std::max(start, cpuIn.freeAt[coreIn]);
    }
    double seconds = b * perByte;
    const bool leafCrossing = !local && leafBytesPerSec_ > 0 && leafOf(from) != leafOf(to);
    if (!local && p_.nicBytesPerSec > 0) {
        start = std::max({start, nicOut_[from], nicIn_[to]});
        seconds = std::max(seconds, b / p_.nicBytesPerSec);
    }
    if (leafCrossing) {
        start = std::max({start, leafUp_[leafOf(from)], leafDown_[leafOf(to)]});
        seconds = std::max(seconds, b / leafBytesPerSec_);
    }
    // Each resource is held for what its own capacity needs.
    if (cpuOutSeconds > 0) cpuOut.freeAt[coreOut] = start + cpuOutSeconds;
    if (cpuInSeconds > 0) {
        const bool sameCore = cpuOutSeconds > 0 && &cpuIn == &cpuOut && coreIn == coreOut;  // a one-core host
        cpuIn.freeAt[coreIn] = start + cpuInSeconds + (sameCore ? cpuOutSeconds : 0);
    }
    if (!local && p_.nicBytesPerSec > 0) {
        nicOut_[from] = start + b / p_.nicBytesPerSec;
        nicIn_[to] = start + b / p_.nicBytesPerSec;
    }
    if (leafCrossing) {
        leafUp_[leafOf(from)] = start + b / leafBytesPerSec_;
        leafDown_[leafOf(to)] = start + b / leafBytesPerSec_;
    }
    const double alpha = p_.crowded() && link.alphaCrowded > 0 ? link.alphaCrowded : link.alpha;
    return MessageTiming{start, start + seconds, start + seconds + alpha};
}

}  // namespace hostccl::sim
