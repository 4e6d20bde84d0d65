// What the rendezvous sends: each rank's fixed-size entry (rank 0 gathers them and
// sends the whole table back) and a status. Entries arrive only over connections
// that proved the secret, and are still checked field by field before use.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/bootstrap/peer_info.h"
#include "hccl/hccl_types.h"

namespace hostccl::bootstrap {

constexpr uint32_t kMaxRanks = 65536;  // bounds what a table may make rank 0 allocate

struct WireEntry {
    uint32_t rank;
    uint32_t nRanks;
    char ip[64];
    uint16_t port;
    uint16_t metricsPort;  // 0: no monitoring endpoint
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

// Sent instead of an entry by a rank that cannot join (Purpose::JoinFailure).
struct WireJoinFailure {
    WireStatus status;
    uint32_t nRanks;
    uint32_t reserved;
};

// After an OK status: where the rank gets the table. The server sends it to rank 0
// only; every other rank gets it from its parent in an 8-nomial tree over the ranks,
// which connects to it (Purpose::Table), so no rank sends more than 7 log8(n) tables.
struct WireRoute {
    uint32_t parent;  // kFromServer: the table follows on this connection
    uint32_t reserved;
};
constexpr uint32_t kFromServer = 0xffffffffu;

// The 8-nomial tree rooted at rank 0 (log8 n hops: each costs a scheduling delay on
// a crowded host, so a wide tree beats a binomial one): parent(r) clears r's lowest
// nonzero base-8 digit; the children of r are r + j 8^i (j = 1..7) for every 8^i
// below that digit's place (below n for the root), and below n.
constexpr uint32_t kTreeRadix = 8;
uint32_t treeParent(uint32_t rank);
std::vector<uint32_t> treeChildren(uint32_t rank, uint32_t n);

WireEntry toWire(const PeerInfo& p, uint32_t nRanks);
// Whether an entry from the wire is well formed: terminated strings, an IPv4
// address, a port, rank < nRanks <= kMaxRanks. False with `why` otherwise.
bool checkEntry(const WireEntry& w, std::string* why);
PeerInfo fromWire(const WireEntry& w);  // after checkEntry

WireStatus status(HcclResult code, const std::string& reason);
HcclResult statusCode(const WireStatus& s);  // an unknown code reads as HCCL_E_INTERNAL
std::string statusReason(const WireStatus& s);

}  // namespace hostccl::bootstrap
