#include "core/link_factory.h"

#include "transports/link_negotiation.h"
#include "transports/transport_table.h"

namespace hostccl {

namespace {

transport::PairEnds pairEnds(const PeerInfo& self, const PeerInfo& peer, uint64_t commId, uint32_t commSize) {
    transport::PairEnds e;
    e.selfRank = self.rank;
    e.peerRank = peer.rank;
    e.selfIp = self.ip;
    e.peerIp = peer.ip;
    e.selfPid = self.pid;
    e.peerPid = peer.pid;
    e.sameHost = self.hostId == peer.hostId;
    e.sameProcess = sameProcess(self, peer);
    e.commId = commId;
    e.commSize = commSize;
    return e;
}

}  // namespace

bool sharesMemoryWith(const PeerInfo& self, const PeerInfo& peer) {
    return transport::firstChoice(pairEnds(self, peer, 0, 0)).linkClass == LinkClass::Shm;
}

bool pairsInProcess(const PeerInfo& self, const PeerInfo& peer) {
    return transport::linksInProcess(pairEnds(self, peer, 0, 0));
}

bool makeInProcessPair(const PeerInfo& self, const PeerInfo& peer, uint64_t commId,
                       std::unique_ptr<transport::Link>* mine, std::unique_ptr<transport::Link>* theirs,
                       std::string* why) {
    return transport::makeInProcessLinks(pairEnds(self, peer, commId, 0), mine, theirs, why);
}

HcclResult makeLink(const PeerInfo& self, const PeerInfo& peer, uint64_t commId, uint32_t commSize, net::Fd fd,
                    Deadline deadline, const ErrorSite& site, std::unique_ptr<transport::Link>* out) {
    return transport::negotiateLink(pairEnds(self, peer, commId, commSize), std::move(fd), deadline, site, out);
}

}  // namespace hostccl
