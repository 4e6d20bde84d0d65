#include "transports/tcp/tcp_transport.h"

#include "transports/tcp/tcp_connect.h"
#include "transports/tcp/tcp_link.h"

namespace hostccl::transport {

namespace {

// Opens the link's extra sockets over the pair's connection (tcp_connect.h).
class PendingTcpLink final : public PendingLink {
public:
    explicit PendingTcpLink(const PairEnds& ends) : ends_(ends) {}
    std::unique_ptr<Link> connect(net::Fd& fd, Deadline deadline, std::string* why) override {
        std::vector<net::Fd> lanes;
        if (!openTcpLanes(std::move(fd), ends_.offering(), wantedTcpLanes(), deadline, &lanes, why)) return nullptr;
        return std::make_unique<TcpLink>(ends_.peerRank, ends_.commId, std::move(lanes), ends_.peerIp);
    }

private:
    PairEnds ends_;
};

bool wantTcp(const PairEnds&) { return true; }

std::unique_ptr<PendingLink> offerTcp(const PairEnds& ends, std::string*) { return std::make_unique<PendingTcpLink>(ends); }

std::unique_ptr<PendingLink> acceptTcp(const PairEnds& ends, const std::string&, std::string*) {
    return std::make_unique<PendingTcpLink>(ends);
}

}  // namespace

const TransportEntry& tcpTransport() {
    static const TransportEntry entry{"tcp", 'T', LinkClass::Tcp, HCCL_E_TCP_CONNECT, wantTcp, offerTcp, acceptTcp};
    return entry;
}

std::unique_ptr<Link> singleSocketTcpLink(const PairEnds& ends, net::Fd fd) {
    std::vector<net::Fd> lanes;
    lanes.push_back(std::move(fd));
    return std::make_unique<TcpLink>(ends.peerRank, ends.commId, std::move(lanes), ends.peerIp);
}

}  // namespace hostccl::transport
