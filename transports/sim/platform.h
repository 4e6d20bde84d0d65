// What the simulator runs on: hosts x ranks, how fast each kind of link moves a
// message (alpha-beta per flow), what each host's network interface carries, a
// leaf-switch layer that may be oversubscribed, and each host's cores with their
// copy and reduction rates. Taken from a running communicator's cost model
// (fromCostParams: the init probe's numbers) or from a JSON file (load).
#pragma once

#include <cstdint>
#include <string>

#include "algorithms/cost_model/cost_params.h"

namespace hostccl::sim {

struct LinkModel {
    double alpha = 0;     // seconds from a message's last byte leaving to its arrival
    double beta = 0;      // seconds per byte for one flow (1 / its rate alone)
    double cpuShare = 0;  // the part of a transfer's time that occupies a core at each end
};

struct Platform {
    uint32_t hosts = 1;
    uint32_t ranksPerHost = 1;
    uint32_t coresPerHost = 0;  // 0: a core per rank (never crowded)
    LinkModel shm;              // between ranks of one host
    LinkModel net;              // between hosts
    LinkClass netClass = LinkClass::Tcp;
    double nicBytesPerSec = 0;  // per host and direction (0: only the per-flow beta limits)
    uint32_t hostsPerSwitch = 0;  // hosts under one leaf switch (0: one switch for all)
    double oversubscription = 1;  // a leaf's uplink carries hostsPerSwitch * NIC / this
    double gamma = 0;             // seconds per byte reduced on one core
    double copyBeta = 0;          // seconds per byte copied on one core
    uint64_t eagerBytes = 256 * 1024;  // larger messages move once the receive is posted

    uint32_t ranks() const { return hosts * ranksPerHost; }
    uint32_t hostOf(uint32_t rank) const { return rank / ranksPerHost; }
    uint32_t cores() const { return coresPerHost == 0 ? ranksPerHost : coresPerHost; }
    // What the selector's cost model is given, so it sees what a probe would measure.
    CostParams costParams() const;
    // hosts=4 ranks/host=8 cores=... shm ... net ...
    std::string summary() const;
};

// From measured or configured cost parameters (a communicator's probe).
Platform fromCostParams(const CostParams& p, uint32_t hosts, uint32_t ranksPerHost, uint32_t coresPerHost,
                        LinkClass netClass);

// Reads a platform from JSON text. Every number is checked: a missing, negative or
// non-numeric field fails with its name, and `out` is left unchanged.
bool parsePlatform(const std::string& json, Platform* out, std::string* why);
// The JSON form parsePlatform reads (what --probe writes).
std::string platformJson(const Platform& p);

}  // namespace hostccl::sim
