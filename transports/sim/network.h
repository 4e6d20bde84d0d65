// How long messages and local work take on the simulated platform, contention
// included. Every resource a transfer needs is a server that works in the order
// requests come (the simulator makes them in virtual-time order): a host's cores
// (several servers), its network interface in each direction, and, across leaf
// switches, the leaves' uplinks and downlinks. A message starts when every
// resource on its path is free, moves at the slowest of its flow rate and the
// resources' capacities, and holds each resource for as long as its own capacity
// needs for the bytes, so flows sharing a NIC or an oversubscribed uplink share
// its bandwidth and ranks outnumbering cores share the cores.
#pragma once

#include <cstdint>
#include <vector>

#include "transports/sim/platform.h"

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

private:
    struct Cores {
        std::vector<Time> freeAt;  // per core
        size_t earliest() const;
    };
    uint32_t leafOf(uint32_t host) const { return p_.hostsPerSwitch == 0 ? 0 : host / p_.hostsPerSwitch; }

    Platform p_;
    Rates rates_;
    std::vector<Cores> cores_;                  // per host
    std::vector<Time> nicOut_, nicIn_;          // per host
    std::vector<Time> leafUp_, leafDown_;       // per leaf switch
    double leafBytesPerSec_ = 0;                // 0: uplinks never limit
};

}  // namespace hostccl::sim
