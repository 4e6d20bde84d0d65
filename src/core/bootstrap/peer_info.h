// What every rank learns about every other rank at bootstrap.
#pragma once

#include <cstdint>
#include <string>

namespace hostccl {

struct PeerInfo {
    uint32_t rank = 0;
    std::string ip;      // where its peer listener is reached
    uint16_t port = 0;   // its process's peer listener
    int32_t device = -1;
    uint32_t pid = 0;
    std::string hostId;  // ranks with equal hostId share a host (shared memory)
    uint16_t hostCores = 1;  // physical cores of its machine (hwloc)
    uint16_t hostNumaNodes = 1;
    uint16_t metricsPort = 0;  // its process's monitoring endpoint (0: none), at `ip`
};

// Two ranks that are threads of one process: they share their fate (no health
// channel between them) and their address space (links without sockets).
inline bool sameProcess(const PeerInfo& a, const PeerInfo& b) { return a.pid == b.pid && a.hostId == b.hostId; }

// "rank 3 (host node-b 10.0.0.2, pid 4242)": enough to find the process.
std::string whoIs(const PeerInfo& p);

// "hostname/boot-id/netns", or HOSTCCL_HOST_ID when set.
std::string hostIdentity();
// The machine (its cores) a host identity runs on: its kernel's boot id, the middle
// part of "hostname/boot-id/netns". Hosts emulated on one machine differ in network
// namespace and often in hostname too (a UTS namespace, a container), but share the
// kernel and its cores; two machines never share a boot id (a random UUID per boot).
// An identity without that shape (a forced one such as "node3") as it is.
std::string machineOf(const std::string& hostId);

}  // namespace hostccl
