// What the simulator runs on: hosts x ranks, how fast each kind of link moves a
// message (alpha-beta per flow), what each host's network interface carries, a
// leaf-switch layer that may be oversubscribed, and each host's cores with their
// copy and reduction rates. Taken from a running communicator's cost model
// (fromCostParams: the init probe's numbers) or from a JSON file (load).
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "algorithms/cost_model/cost_params.h"

namespace hostccl::sim {

struct LinkModel {
    double alpha = 0;     // seconds from a message's last byte leaving to its arrival
    double beta = 0;      // seconds per byte for one flow (1 / its rate alone)
    // The part of a transfer's time that occupies a core at each end. Across hosts a
    // message has not left (arrived) before its sender's (receiver's) part is done:
    // TCP's kernel work on cores that also carry other flows and reductions.
    double cpuShare = 0;
    // Alpha when a host's ranks outnumber its cores (0: alpha): a message then often
    // waits for its receiver to be scheduled, as the init probe measures it.
    double alphaCrowded = 0;
    // The least time from a message being able to move to its arrival (0: none): a
    // step of a real op on this network (hostccl-sim --probe times 8-byte ring steps),
    // its peer's scheduling and the op's own costs. A longer wire time hides it, as
    // a real op's waits overlap the bytes on the wire; alpha is added after the bytes.
    double step = 0;
};

// Rates for an op whose data on a host outgrows its caches: memory bandwidth, not
// the caches', sets them (measured with buffers of tens of MiB; 0: as in cache).
// Between the two, `curve` says how far an op holding a given number of bytes on a
// host is from the in-cache rates (0) toward these (1), as copies of growing size
// measured it: sorted by bytes, interpolated on a log scale; empty: never bulk.
struct BulkRates {
    std::vector<std::pair<uint64_t, double>> curve;
    double shmBeta = 0, netBeta = 0, gamma = 0, copyBeta = 0;
    double netCpuShare = 0;  // the net link's cpuShare in bulk (0: as in cache)
    double fractionAt(uint64_t hostBytes) const;
};

// The rates one op runs at: in cache, or the bulk ones where given.
struct Rates {
    LinkModel shm, net;
    double gamma = 0, copyBeta = 0;
};

struct Platform {
    uint32_t hosts = 1;
    uint32_t ranksPerHost = 1;
    uint32_t coresPerHost = 0;  // 0: a core per rank (never crowded)
    // How much of a core each of them is (0 < x <= 1): emulated hosts that share one
    // machine's cores (4 network-namespace hosts on 2 cores: one core each at 0.5).
    // Work on them takes 1 / coreSpeed as long.
    double coreSpeed = 1;
    LinkModel shm;              // between ranks of one host
    LinkModel net;              // between hosts
    LinkClass netClass = LinkClass::Tcp;
    double nicBytesPerSec = 0;  // per host and direction (0: only the per-flow beta limits)
    uint32_t hostsPerSwitch = 0;  // hosts under one leaf switch (0: one switch for all)
    double oversubscription = 1;  // a leaf's uplink carries hostsPerSwitch * NIC / this
    double gamma = 0;             // seconds per byte reduced on one core
    double copyBeta = 0;          // seconds per byte copied on one core
    uint64_t eagerBytes = 256 * 1024;  // larger messages move once the receive is posted
    // Shared memory from this size on is one pass by the receiver, straight from the
    // sender's buffer once the receive is posted (a reduction fused into it); below
    // it, both ends copy through a ring.
    uint64_t shmSingleCopyBytes = 64 * 1024;
    BulkRates bulk;

    uint32_t ranks() const { return hosts * ranksPerHost; }
    uint32_t hostOf(uint32_t rank) const { return rank / ranksPerHost; }
    bool singleCopy(uint32_t src, uint32_t dst, uint64_t bytes) const {
        return hostOf(src) == hostOf(dst) && bytes >= shmSingleCopyBytes;
    }
    uint32_t cores() const { return coresPerHost == 0 ? ranksPerHost : coresPerHost; }
    bool crowded() const { return ranksPerHost > cores(); }
    // The rates of an op holding `hostBytes` of data on each host.
    Rates ratesFor(uint64_t hostBytes) const;
    // What the selector's cost model is given, so it sees what a probe would measure.
    CostParams costParams() const;
    // hosts=4 ranks/host=8 cores=... shm ... net ...
    std::string summary() const;
};

// From measured or configured cost parameters (a communicator's probe).
// Sets the cores per host from `x`: whole cores, or below 1 a part of one (one core
// at that speed); 0 is a core per rank. False (nothing set) for a fraction above 1.
bool setCores(Platform* p, double x);
Platform fromCostParams(const CostParams& p, uint32_t hosts, uint32_t ranksPerHost, uint32_t coresPerHost,
                        LinkClass netClass);

// Reads a platform from JSON text. Every number is checked: a missing, negative or
// non-numeric field fails with its name, and `out` is left unchanged.
bool parsePlatform(const std::string& json, Platform* out, std::string* why);
// The JSON form parsePlatform reads (what --probe writes).
std::string platformJson(const Platform& p);

}  // namespace hostccl::sim
