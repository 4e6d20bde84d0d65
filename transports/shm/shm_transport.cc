#include "transports/shm/shm_transport.h"

#include "common/log.h"
#include "transports/shm/shm_link.h"
#include "transports/shm/shm_segment.h"

namespace hostccl::transport {

namespace {

// The offering rank writes ring 0 of the segment, the answering rank ring 1.
int outboundRing(const PairEnds& ends) { return ends.offering() ? 0 : 1; }

class PendingShmLink final : public PendingLink {
public:
    PendingShmLink(const PairEnds& ends, shm::Mapping mapping, std::string name)
        : ends_(ends), mapping_(std::move(mapping)), name_(std::move(name)) {}
    ~PendingShmLink() override { answered(); }
    std::string payload() const override { return name_; }
    void answered() override {  // mapped by the peer, or given up: leave nothing behind
        if (ends_.offering() && !name_.empty()) shm::Mapping::unlink(name_);
        name_.clear();
    }
    std::unique_ptr<Link> connect(net::Fd& fd, Deadline, std::string*) override {
        return std::make_unique<ShmLink>(ends_.peerRank, ends_.commId, std::move(mapping_), outboundRing(ends_),
                                         std::move(fd), ends_.peerIp, ends_.peerPid);
    }

private:
    PairEnds ends_;
    shm::Mapping mapping_;
    std::string name_;  // the segment's name until the offer is answered (offering side)
};

bool wantShm(const PairEnds& ends) { return ends.sameHost; }

std::unique_ptr<PendingLink> offerShm(const PairEnds& ends, std::string* why) {
    if (!ends.sameHost) {
        *why = "the ranks are on different hosts";
        return nullptr;
    }
    std::string name;
    shm::Mapping mapping = shm::Mapping::create(&name, why);
    if (!mapping.valid()) {
        log::warn("rank {}: shared memory for rank {} unavailable: {}", ends.selfRank, ends.peerRank, *why);
        return nullptr;
    }
    return std::make_unique<PendingShmLink>(ends, std::move(mapping), std::move(name));
}

std::unique_ptr<PendingLink> acceptShm(const PairEnds& ends, const std::string& name, std::string* why) {
    shm::Mapping mapping = shm::Mapping::open(name, why);
    if (!mapping.valid()) {
        log::warn("rank {}: cannot map rank {}'s shared memory: {}", ends.selfRank, ends.peerRank, *why);
        return nullptr;
    }
    return std::make_unique<PendingShmLink>(ends, std::move(mapping), std::string());
}

bool inProcessShmPair(const PairEnds& ends, std::unique_ptr<Link>* mine, std::unique_ptr<Link>* theirs,
                   std::string* why) {
    shm::Mapping mapping = shm::Mapping::inProcess(why);
    if (!mapping.valid()) return false;
    const int outbound = outboundRing(ends);  // as an offer and its answer would assign the rings
    *theirs = std::make_unique<ShmLink>(ends.selfRank, ends.commId, mapping.alias(), 1 - outbound, net::Fd(),
                                        ends.selfIp, ends.selfPid);
    *mine = std::make_unique<ShmLink>(ends.peerRank, ends.commId, std::move(mapping), outbound, net::Fd(),
                                      ends.peerIp, ends.peerPid);
    return true;
}

}  // namespace

const TransportEntry& shmTransport() {
    static const TransportEntry entry{"shm", 'S', LinkClass::Shm, HCCL_E_UNAVAIL, wantShm,
                                      offerShm, acceptShm, inProcessShmPair};
    return entry;
}

}  // namespace hostccl::transport
