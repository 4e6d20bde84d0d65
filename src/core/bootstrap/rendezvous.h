// The rendezvous: every rank connects to one server (the root-info listener, or
// rank 0's rank-table address), proves the job secret and registers its PeerInfo
// (above 256 ranks the connections are staggered, ~7000 per second). Once all ranks
// are in, the server sends each rank a status and its parent in an 8-nomial tree, and
// the table to rank 0 only; every rank receives the table from its parent and passes
// it to its children at once (log8 n hops, no rank sends more than 7 log8 n copies;
// each copy proven by a MAC under the job secret). Init
// failure is collective: when the rendezvous cannot complete, every registered rank
// is told why, and so is every rank that registers later; a rank that fails before
// registering reports its failure to the server, which ends the rendezvous at once.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/deadline.h"
#include "common/error.h"
#include "common/siphash.h"
#include "core/bootstrap/peer_info.h"
#include "common/net/socket.h"

namespace hostccl::bootstrap {

struct RendezvousSpec {
    std::string bindIp;  // "" = all interfaces
    uint16_t port = 0;   // 0 = any free port (or the HCCL_IF_BASE_PORT range)
    Secret secret;
    uint64_t id = 0;
};

// Starts the server in a background thread; it ends once the table is served or the
// connect timeout passes. On success *boundPort is where it listens.
bool startRendezvousServer(const RendezvousSpec& spec, uint16_t* boundPort, std::string* err);

// Registers `self` and returns the table indexed by rank. self.ip may be empty: then
// the local address of the connection to the server is advertised (it reaches the root,
// so it is likely to reach the peers).
HcclResult joinRendezvous(const net::Endpoint& server, const Secret& secret, uint64_t id, uint32_t nRanks,
                          PeerInfo self, std::vector<PeerInfo>* table, Deadline deadline, const ErrorSite& site);

// When this process hosts rendezvous `id` and a rank reported that it cannot join:
// waits until the server has told every rank (bounded by `deadline`), so a caller
// that ends its process on the failure does not take the answer away from them.
void awaitRendezvousFailureSpread(uint64_t id, Deadline deadline);

// For a rank that fails before it can register (no listener, a bad whitelist): tells
// the server why, which fails the rendezvous for every rank at once with that cause
// instead of leaving them to wait for HCCL_CONNECT_TIMEOUT. Best effort, a few seconds.
void reportJoinFailure(const net::Endpoint& server, const Secret& secret, uint64_t id, uint32_t nRanks, uint32_t rank,
                       HcclResult code, const std::string& why);

}  // namespace hostccl::bootstrap
