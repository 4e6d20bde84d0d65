// Builds the Link to one peer, after the TCP connection to it has been
// authenticated: the core's ranks (PeerInfo) as the transports see a pair
// (transports/transport_entry.h), and the transports' negotiation
// (transports/link_negotiation.h), which picks from the transport table.
#pragma once

#include <memory>

#include "common/error.h"
#include "core/bootstrap/peer_info.h"
#include "common/net/socket.h"
#include "transports/link.h"

namespace hostccl {

// `commSize` sizes RDMA rings (transports/rdma/ring_shape.h): both ends know it.
HcclResult makeLink(const PeerInfo& self, const PeerInfo& peer, uint64_t commId, uint32_t commSize, net::Fd fd,
                    Deadline deadline, const ErrorSite& site, std::unique_ptr<transport::Link>* out);

// Whether the pair's first choice is shared memory (same host, no other transport forced).
bool sharesMemoryWith(const PeerInfo& self, const PeerInfo& peer);
// Whether two ranks are threads of one process that would use shared memory: their
// link is then built by makeInProcessPair, without a connection.
bool pairsInProcess(const PeerInfo& self, const PeerInfo& peer);
// Both ends of such a pair over one anonymous segment; false with `why` on failure.
bool makeInProcessPair(const PeerInfo& self, const PeerInfo& peer, uint64_t commId,
                       std::unique_ptr<transport::Link>* mine, std::unique_ptr<transport::Link>* theirs,
                       std::string* why);

}  // namespace hostccl
