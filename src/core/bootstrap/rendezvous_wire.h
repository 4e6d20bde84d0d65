// What the rendezvous sends: each rank's fixed-size entry (rank 0 gathers them and
// sends the whole table back) and a status. Entries arrive only over connections
// that proved the secret, and are still checked field by field before use.
#pragma once

#include <cstdint>
#include <string>

#include "core/bootstrap/peer_info.h"
#include "hccl/hccl_types.h"

namespace hostccl::bootstrap {

constexpr uint32_t kMaxRanks = 65536;  // bounds what a table may make rank 0 allocate

struct WireEntry {
    uint32_t rank;
    uint32_t nRanks;
    char ip[64];
    uint16_t port;
    uint16_t reserved;
    int32_t device;
    uint32_t pid;
    uint16_t hostCores;
    uint16_t hostNumaNodes;
    char hostId[176];
};
static_assert(sizeof(WireEntry) == 264, "wire layout");

struct WireStatus {
    uint32_t code;  // HcclResult
    char reason[124];
};

WireEntry toWire(const PeerInfo& p, uint32_t nRanks);
// Whether an entry from the wire is well formed: terminated strings, an IPv4
// address, a port, rank < nRanks <= kMaxRanks. False with `why` otherwise.
bool checkEntry(const WireEntry& w, std::string* why);
PeerInfo fromWire(const WireEntry& w);  // after checkEntry

WireStatus status(HcclResult code, const std::string& reason);
HcclResult statusCode(const WireStatus& s);  // an unknown code reads as HCCL_E_INTERNAL
std::string statusReason(const WireStatus& s);

}  // namespace hostccl::bootstrap
