// How long messages and local work take on the simulated platform, contention
// included. Every resource a transfer needs is a server that works in the order
// requests come (the simulator makes them in virtual-time order): a host's cores
// (several servers), its network interface in each direction, and, across leaf
// switches, the leaves' uplinks and downlinks. A message starts when every
// resource on its path is free, moves at the slowest of its flow rate and the
// resources' capacities, and holds each resource for as long as its own capacity
// needs for the bytes, so flows sharing a NIC or an oversubscribed uplink share
// its bandwidth and ranks outnumbering cores share the cores. Every resource keeps a
// calendar, and a message crosses NICs and uplinks in chunks, each in the earliest
// gap that fits on its whole path: flows through one NIC interleave, and one waiting
// for a busy receiver does not hold up its sender's other traffic or a core's work.
#pragma once

#include <cstdint>
#include <vector>

#include "sim/calendar.h"
#include "sim/platform.h"

namespace hostccl::sim {

// Virtual seconds.
using Time = double;

struct MessageTiming {
    Time start = 0;    // first byte moves
    Time sent = 0;     // last byte has left the sender: the send completes
    Time arrived = 0;  // last byte is at the receiver
};

class Network {
public:
    explicit Network(const Platform& p);
    const Platform& platform() const { return p_; }
    // The rates of the next op, which holds `hostBytes` of data on each host.
    void setWorkingSet(uint64_t hostBytes) { rates_ = p_.ratesFor(hostBytes); }
    const Rates& rates() const { return rates_; }

    // A message of `bytes` from rank `src` to rank `dst`, able to move from `ready` on.
    // `fusedReduce`: a single shared-memory copy that also reduces (the receiver's
    // one pass then runs at the slower of the copy and the reduction).
    MessageTiming transfer(uint32_t src, uint32_t dst, uint64_t bytes, Time ready, bool fusedReduce = false);
    // `seconds` of work on one of `host`'s cores, asked for at `ready`: when it ends.
    Time work(uint32_t host, double seconds, Time ready);
    // Every resource idle again (before each simulated op).
    void reset();
    // No request will start before `t` again: what ended by then can be forgotten.
    void forgetBefore(Time t);

private:
    // A host's cores, each with its calendar (work reserved ahead of time, as a
    // message's CPU part, must not hold up what fits before it).
    struct Cores {
        std::vector<Calendar> core;
        // The core where `seconds` fit soonest from `from` (skipping `except`), and when.
        size_t soonest(Time from, double seconds, size_t except, Time* at) const;
    };
    double alphaOf(const LinkModel& link) const;
    Time reserveWire(uint32_t from, uint32_t to, double bytes, double flowPerByte, bool leafCrossing, Time* start);
    uint32_t leafOf(uint32_t host) const { return p_.hostsPerSwitch == 0 ? 0 : host / p_.hostsPerSwitch; }

    Platform p_;
    Rates rates_;
    std::vector<Cores> cores_;                  // per host
    std::vector<Calendar> nicOut_, nicIn_;      // per host
    std::vector<Calendar> leafUp_, leafDown_;   // per leaf switch
    double leafBytesPerSec_ = 0;                // 0: uplinks never limit
};

}  // namespace hostccl::sim
