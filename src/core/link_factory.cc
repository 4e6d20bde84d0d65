#include "core/link_factory.h"

#include <cstring>

#include "common/env.h"
#include "transports/shm/shm_link.h"
#include "transports/tcp/tcp_link.h"

namespace hostccl {

namespace {

enum : char { kUseTcp = 'T', kUseShm = 'S', kMapped = 'A', kMapFailed = 'F' };

struct Offer {
    char kind;
    char name[63];
};

bool wantShm(const PeerInfo& self, const PeerInfo& peer) {
    return self.hostId == peer.hostId && env::getString("HOSTCCL_TRANSPORT") != "tcp";
}

std::unique_ptr<transport::Link> tcpLink(const PeerInfo& peer, uint64_t commId, net::Fd fd) {
    return std::make_unique<transport::TcpLink>(peer.rank, commId, std::move(fd), peer.ip);
}

// Lower rank: creates the segment and offers it; ring 0 is its outbound ring.
HcclResult offer(const PeerInfo& self, const PeerInfo& peer, uint64_t commId, net::Fd fd, Deadline deadline,
                 const ErrorSite& site, std::unique_ptr<transport::Link>* out) {
    Offer o{};
    std::string err, name;
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
        *out = tcpLink(peer, commId, std::move(fd));
        return HCCL_SUCCESS;
    }
    char reply = 0;
    bool got = net::recvAll(fd.get(), &reply, 1, deadline, &err);
    transport::shm::Mapping::unlink(name);  // mapped (or given up) by now: leave nothing behind
    if (!got) return fail(HCCL_E_TCP_CONNECT, site, "transport reply: {}", err);
    if (reply != kMapped) {
        log::warn("{}: peer could not map shared memory, using TCP", describe(site));
        *out = tcpLink(peer, commId, std::move(fd));
        return HCCL_SUCCESS;
    }
    *out = std::make_unique<transport::ShmLink>(peer.rank, commId, std::move(mapping), 0, std::move(fd), peer.ip,
                                                peer.pid);
    return HCCL_SUCCESS;
}

// Higher rank: follows the offer; ring 1 is its outbound ring.
HcclResult accept(const PeerInfo& peer, uint64_t commId, net::Fd fd, Deadline deadline, const ErrorSite& site,
                  std::unique_ptr<transport::Link>* out) {
    Offer o{};
    std::string err;
    if (!net::recvAll(fd.get(), &o, sizeof o, deadline, &err))
        return fail(HCCL_E_TCP_CONNECT, site, "transport offer: {}", err);
    if (o.kind == kUseTcp) {
        *out = tcpLink(peer, commId, std::move(fd));
        return HCCL_SUCCESS;
    }
    if (o.kind != kUseShm || std::memchr(o.name, '\0', sizeof o.name) == nullptr)
        return fail(HCCL_E_TCP_CONNECT, site, "malformed transport offer");
    transport::shm::Mapping mapping = transport::shm::Mapping::open(o.name, &err);
    char reply = mapping.valid() ? kMapped : kMapFailed;
    if (!mapping.valid()) log::warn("{}: cannot map the peer's shared memory, using TCP: {}", describe(site), err);
    if (!net::sendAll(fd.get(), &reply, 1, deadline, &err))
        return fail(HCCL_E_TCP_CONNECT, site, "transport reply: {}", err);
    if (!mapping.valid()) {
        *out = tcpLink(peer, commId, std::move(fd));
        return HCCL_SUCCESS;
    }
    *out = std::make_unique<transport::ShmLink>(peer.rank, commId, std::move(mapping), 1, std::move(fd), peer.ip,
                                                peer.pid);
    return HCCL_SUCCESS;
}

}  // namespace

HcclResult makeLink(const PeerInfo& self, const PeerInfo& peer, uint64_t commId, net::Fd fd, Deadline deadline,
                    const ErrorSite& site, std::unique_ptr<transport::Link>* out) {
    return self.rank < peer.rank ? offer(self, peer, commId, std::move(fd), deadline, site, out)
                                 : accept(peer, commId, std::move(fd), deadline, site, out);
}

}  // namespace hostccl
