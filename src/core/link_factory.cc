#include "core/link_factory.h"

#include <cstring>
#include <mutex>

#include "common/env.h"
#include "transports/shm/shm_link.h"
#include "transports/tcp/tcp_connect.h"
#include "transports/tcp/tcp_link.h"
#ifdef HOSTCCL_HAVE_RDMA
#include "transports/rdma/verbs/rdma_link.h"
#endif

namespace hostccl {

namespace {

enum : char { kUseTcp = 'T', kUseShm = 'S', kUseRdma = 'R', kMapped = 'A', kMapFailed = 'F' };

struct Offer {
    char kind;
    char name[63];
};

// A link of one socket: where the two ends have already used it for more than the
// transport offer (an RDMA attempt that fell back), so no lane handshake follows.
std::unique_ptr<transport::Link> singleTcpLink(const PeerInfo& peer, uint64_t commId, net::Fd fd) {
    std::vector<net::Fd> lanes;
    lanes.push_back(std::move(fd));
    return std::make_unique<transport::TcpLink>(peer.rank, commId, std::move(lanes), peer.ip);
}

// Both ends chose TCP: open the link's extra sockets over `fd` (tcp_connect.h).
HcclResult tcpLink(const PeerInfo& self, const PeerInfo& peer, uint64_t commId, net::Fd fd, Deadline deadline,
                   const ErrorSite& site, std::unique_ptr<transport::Link>* out) {
    std::vector<net::Fd> lanes;
    std::string why;
    if (!transport::openTcpLanes(std::move(fd), self.rank < peer.rank, transport::wantedTcpLanes(), deadline, &lanes, &why))
        return fail(HCCL_E_TCP_CONNECT, site, "opening the TCP link's sockets: {}", why);
    *out = std::make_unique<transport::TcpLink>(peer.rank, commId, std::move(lanes), peer.ip);
    return HCCL_SUCCESS;
}

// HOSTCCL_TRANSPORT=rdma forces RDMA between every pair (a failure to set it up then
// fails init); by default it is tried between hosts, and within a host only with
// HCCL_INTRA_ROCE_ENABLE=1, as HCCL does.
bool rdmaForced() { return env::getString("HOSTCCL_TRANSPORT") == "rdma"; }

bool wantRdma(const PeerInfo& self, const PeerInfo& peer) {
    if (rdmaForced()) return true;
    if (env::getString("HOSTCCL_TRANSPORT") == "tcp") return false;
    return self.hostId != peer.hostId || env::getInt("HCCL_INTRA_ROCE_ENABLE", 0, 1) == 1;
}

bool wantShm(const PeerInfo& self, const PeerInfo& peer) {
    const std::string t = env::getString("HOSTCCL_TRANSPORT");
    return self.hostId == peer.hostId && t != "tcp" && t != "rdma";  // RDMA, when wanted, was tried first
}

#ifdef HOSTCCL_HAVE_RDMA
// This process's RDMA device, or null; why there is none is logged once.
std::shared_ptr<transport::rdma::VerbsDevice> rdmaDevice(const PeerInfo& self, std::string* why) {
    auto device = transport::rdma::VerbsDevice::get(self.ip, why);
    static std::once_flag logged;
    if (device == nullptr) std::call_once(logged, [&] { log::info("RDMA not used, TCP instead: {}", *why); });
    return device;
}
#endif

// Both sides run this once they agreed on RDMA. Falls back to TCP (same socket) if
// the queue pairs cannot connect, unless RDMA is forced.
HcclResult rdmaOrTcp(const PeerInfo& self, const PeerInfo& peer, uint64_t commId, uint32_t commSize, net::Fd fd,
                     Deadline deadline, const ErrorSite& site, std::unique_ptr<transport::Link>* out) {
#ifdef HOSTCCL_HAVE_RDMA
    std::string why;
    auto device = rdmaDevice(self, &why);
    auto link = transport::rdma::RdmaLink::connect(peer.rank, commId, commSize, device, fd, deadline, &why);
    if (link != nullptr) {
        *out = std::move(link);
        return HCCL_SUCCESS;
    }
    if (rdmaForced()) return fail(HCCL_E_ROCE_CONNECT, site, "RDMA link (HOSTCCL_TRANSPORT=rdma): {}", why);
    log::warn("{}: RDMA link failed, using TCP: {}", describe(site), why);
#else
    (void)self, (void)commSize, (void)deadline, (void)site;
#endif
    *out = singleTcpLink(peer, commId, std::move(fd));
    return HCCL_SUCCESS;
}

// Whether this side can offer or take RDMA; with the reason when it cannot.
bool rdmaAvailable(const PeerInfo& self, std::string* why) {
#ifdef HOSTCCL_HAVE_RDMA
    return rdmaDevice(self, why) != nullptr;
#else
    (void)self;
    *why = "hostccl was built without libibverbs";
    return false;
#endif
}

// Lower rank: creates the segment and offers it; ring 0 is its outbound ring.
HcclResult offer(const PeerInfo& self, const PeerInfo& peer, uint64_t commId, uint32_t commSize, net::Fd fd,
                 Deadline deadline, const ErrorSite& site, std::unique_ptr<transport::Link>* out) {
    Offer o{};
    std::string err, name;
    if (wantRdma(self, peer)) {
        std::string why;
        if (rdmaAvailable(self, &why)) {
            o.kind = kUseRdma;
            char reply = 0;
            if (!net::sendAll(fd.get(), &o, sizeof o, deadline, &err) || !net::recvAll(fd.get(), &reply, 1, deadline, &err))
                return fail(HCCL_E_TCP_CONNECT, site, "transport offer: {}", err);
            if (reply == kMapped) return rdmaOrTcp(self, peer, commId, commSize, std::move(fd), deadline, site, out);
            why = "the peer has no usable RDMA device";
        }
        if (rdmaForced()) {
            if (o.kind != kUseRdma) {  // tell the peer, so it does not wait for an offer
                o.kind = kUseTcp;
                net::sendAll(fd.get(), &o, sizeof o, deadline, &err);
            }
            return fail(HCCL_E_ROCE_CONNECT, site, "HOSTCCL_TRANSPORT=rdma, but {}", why);
        }
        if (o.kind == kUseRdma) {  // declined: TCP on the same socket
            return tcpLink(self, peer, commId, std::move(fd), deadline, site, out);
        }
    }
    transport::shm::Mapping mapping;
    if (wantShm(self, peer)) {
        mapping = transport::shm::Mapping::create(&name, &err);
        if (!mapping.valid()) log::warn("{}: shared memory unavailable, using TCP: {}", describe(site), err);
    }
    o.kind = mapping.valid() ? kUseShm : kUseTcp;
    std::strncpy(o.name, name.c_str(), sizeof o.name - 1);
    if (!net::sendAll(fd.get(), &o, sizeof o, deadline, &err))
        return fail(HCCL_E_TCP_CONNECT, site, "transport offer: {}", err);
    if (o.kind == kUseTcp) {
        return tcpLink(self, peer, commId, std::move(fd), deadline, site, out);
    }
    char reply = 0;
    bool got = net::recvAll(fd.get(), &reply, 1, deadline, &err);
    transport::shm::Mapping::unlink(name);  // mapped (or given up) by now: leave nothing behind
    if (!got) return fail(HCCL_E_TCP_CONNECT, site, "transport reply: {}", err);
    if (reply != kMapped) {
        log::warn("{}: peer could not map shared memory, using TCP", describe(site));
        return tcpLink(self, peer, commId, std::move(fd), deadline, site, out);
    }
    *out = std::make_unique<transport::ShmLink>(peer.rank, commId, std::move(mapping), 0, std::move(fd), peer.ip,
                                                peer.pid);
    return HCCL_SUCCESS;
}

// Higher rank: follows the offer; ring 1 is its outbound ring.
HcclResult accept(const PeerInfo& self, const PeerInfo& peer, uint64_t commId, uint32_t commSize, net::Fd fd,
                  Deadline deadline, const ErrorSite& site, std::unique_ptr<transport::Link>* out) {
    Offer o{};
    std::string err;
    if (!net::recvAll(fd.get(), &o, sizeof o, deadline, &err))
        return fail(HCCL_E_TCP_CONNECT, site, "transport offer: {}", err);
    if (o.kind == kUseRdma) {
        std::string why;
        const bool can = rdmaAvailable(self, &why);
        char reply = can ? kMapped : kMapFailed;
        if (!net::sendAll(fd.get(), &reply, 1, deadline, &err))
            return fail(HCCL_E_TCP_CONNECT, site, "transport reply: {}", err);
        if (can) return rdmaOrTcp(self, peer, commId, commSize, std::move(fd), deadline, site, out);
        if (rdmaForced()) return fail(HCCL_E_ROCE_CONNECT, site, "HOSTCCL_TRANSPORT=rdma, but {}", why);
        return tcpLink(self, peer, commId, std::move(fd), deadline, site, out);
    }
    if (o.kind == kUseTcp && rdmaForced())
        return fail(HCCL_E_ROCE_CONNECT, site, "HOSTCCL_TRANSPORT=rdma, but the peer cannot use RDMA");
    if (o.kind == kUseTcp) {
        return tcpLink(self, peer, commId, std::move(fd), deadline, site, out);
    }
    if (o.kind != kUseShm || std::memchr(o.name, '\0', sizeof o.name) == nullptr)
        return fail(HCCL_E_TCP_CONNECT, site, "malformed transport offer");
    transport::shm::Mapping mapping = transport::shm::Mapping::open(o.name, &err);
    char reply = mapping.valid() ? kMapped : kMapFailed;
    if (!mapping.valid()) log::warn("{}: cannot map the peer's shared memory, using TCP: {}", describe(site), err);
    if (!net::sendAll(fd.get(), &reply, 1, deadline, &err))
        return fail(HCCL_E_TCP_CONNECT, site, "transport reply: {}", err);
    if (!mapping.valid()) {
        return tcpLink(self, peer, commId, std::move(fd), deadline, site, out);
    }
    *out = std::make_unique<transport::ShmLink>(peer.rank, commId, std::move(mapping), 1, std::move(fd), peer.ip,
                                                peer.pid);
    return HCCL_SUCCESS;
}

}  // namespace

bool sharesMemoryWith(const PeerInfo& self, const PeerInfo& peer) { return wantShm(self, peer) && !wantRdma(self, peer); }

bool pairsInProcess(const PeerInfo& self, const PeerInfo& peer) {
    return sameProcess(self, peer) && sharesMemoryWith(self, peer);
}

bool makeInProcessPair(const PeerInfo& self, const PeerInfo& peer, uint64_t commId,
                       std::unique_ptr<transport::Link>* mine, std::unique_ptr<transport::Link>* theirs,
                       std::string* why) {
    transport::shm::Mapping mapping = transport::shm::Mapping::inProcess(why);
    if (!mapping.valid()) return false;
    const int outbound = self.rank < peer.rank ? 0 : 1;  // as offer() and accept() assign the rings
    *theirs = std::make_unique<transport::ShmLink>(self.rank, commId, mapping.alias(), 1 - outbound, net::Fd(),
                                                   self.ip, self.pid);
    *mine = std::make_unique<transport::ShmLink>(peer.rank, commId, std::move(mapping), outbound, net::Fd(), peer.ip,
                                                 peer.pid);
    return true;
}

HcclResult makeLink(const PeerInfo& self, const PeerInfo& peer, uint64_t commId, uint32_t commSize, net::Fd fd,
                    Deadline deadline, const ErrorSite& site, std::unique_ptr<transport::Link>* out) {
    return self.rank < peer.rank ? offer(self, peer, commId, commSize, std::move(fd), deadline, site, out)
                                 : accept(self, peer, commId, commSize, std::move(fd), deadline, site, out);
}

}  // namespace hostccl
