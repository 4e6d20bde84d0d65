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
};

// "hostname/boot-id/netns", or HOSTCCL_HOST_ID when set.
std::string hostIdentity();

}  // namespace hostccl
