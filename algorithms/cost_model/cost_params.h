// The numbers the cost model runs on (Hockney's alpha-beta model plus a reduction
// term, as in Thakur, Rabenseifner & Gropp): per link class a start-up time alpha
// and a time per byte beta, and per host the time per byte to reduce (gamma) and to
// copy. They come from the init probe (probe.h), from HOSTCCL_COST_MODEL, or, when
// neither has them, from defaults typical of this kind of machine.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "transports/link_class.h"

namespace hostccl {


struct LinkCost {
    double alpha = 0;      // seconds per message
    double beta = 0;       // seconds per byte
    double alphaBusy = 0;  // per message when ranks outnumber cores (0: alpha)
};

struct CostParams {
    std::array<LinkCost, kLinkClasses> link{};
    double gamma = 0;      // seconds per byte reduced (fp32 sum, one core)
    double copyBeta = 0;   // seconds per byte copied within a host (one core)
    double handshake = 0;  // seconds for every rank of one host to swap a small message with every other (0: from alpha)
    double boardBarrier = 0;  // seconds for the threads of one process to pass their board's barrier (0: from alpha)
    // Seconds per byte through one host's network interface in one direction, however
    // many flows share it (0: unknown, and one flow is taken to fill it, so flows
    // sharing it divide one flow's rate). Where a flow is slower than its NIC (one
    // TCP stream on a fast link), several flows together go faster than one.
    double nicBeta = 0;
    // The switch layer: hosts (in the communicator's host order) fill leaf switches of
    // `hostsPerLeaf` (0: one non-blocking switch for all), whose uplinks carry
    // hostsPerLeaf NICs' rate divided by `leafOversubscription`: flows crossing between
    // leaves at once share it. Not measurable by the probe: given, or the simulator's.
    uint32_t hostsPerLeaf = 0;
    double leafOversubscription = 1;
    std::array<const char*, kLinkClasses> linkSource{};  // "probe", "config" or "default"
    const char* gammaSource = "default";
    const char* copySource = "default";
    const char* handshakeSource = "default";
    double probeMs = 0;    // how long the init probe took (0: no probe)

    LinkCost& of(LinkClass c) { return link[size_t(c)]; }
    const LinkCost& of(LinkClass c) const { return link[size_t(c)]; }
    static CostParams defaults();
    // "shm alpha=2.1us beta=6.0GB/s, tcp ..., reduce 4.0GB/s (probe), ..." for logs.
    std::string summary() const;
};

// HOSTCCL_COST_MODEL: space- or comma-separated settings, each overriding one number:
//   shm=<alpha>us/<bandwidth>GBps   tcp=...   rdma=...   reduce=<bandwidth>GBps   copy=<bandwidth>GBps
//   nic=<bandwidth>GBps (a host's network interface, per direction, all flows together)
//   leaf=<hosts>/<oversubscription> (hosts per leaf switch, its uplink's oversubscription >= 1)
// for example "shm=1.5us/6GBps tcp=30us/0.12GBps reduce=4GBps nic=3.125GBps leaf=32/2". False and `why` on a
// malformed text; `out` is changed only on success.
bool applyCostConfig(const std::string& text, CostParams* out, std::string* why);

// Whether `p` leaves nothing for the probe to measure.
bool fullyConfigured(const CostParams& p, bool needTcp);

}  // namespace hostccl
