// A Link over one or more non-blocking TCP sockets (lanes: transports/tcp/tcp_lane.h).
// Each message is a WireHeader followed by the payload; a message of 1 MiB or more
// on a link of several lanes goes as contiguous parts, one per lane, each with its
// own header. Sends go out with writev, receives land straight in the user's buffer,
// or (reduce on arrival) in a small staging chunk that is reduced into the
// destination as soon as whole elements are in; headers and small payloads come
// through each lane's inbox, which reads what waits on the socket ahead in one recv.
#pragma once

#include <deque>
#include <string>
#include <vector>

#include "common/net/socket.h"
#include "transports/queued_link.h"
#include "transports/tcp/tcp_lane.h"

namespace hostccl::transport {

class TcpLink final : public QueuedLink {
public:
    // `fds`: the connected sockets, lane 0 first (at least one); both ends must
    // list them in the same order.
    TcpLink(uint32_t peer, uint64_t commId, std::vector<net::Fd> fds, const std::string& peerHost);
    LinkClass linkClass() const override { return LinkClass::Tcp; }
    bool progress() override;
    int pollFd() const override { return lanes_.front().fd(); }
    short pollEvents() const override { return eventsOf(lanes_.front()); }
    bool appendPollFds(std::vector<pollfd>* fds) const override;
    bool kernelPaced() const override { return true; }
    // Looks at lane 0 without reading (MSG_PEEK): only a whole header counts.
    bool unclaimedHeader(WireHeader* h) const override;
    double roundTripUs() const override;
    size_t lanes() const { return lanes_.size(); }

private:
    short eventsOf(const TcpLane& lane) const;
    using LaneStep = int (TcpLane::*)(Transfer*, uint64_t, bool*, HcclResult*, std::string*);
    bool progressSends();
    bool progressRecvs();
    bool progressQueue(std::deque<Transfer*>* queue, size_t TcpLane::*at, LaneStep step);
    // Pops the transfers at the front of `queue` that every lane is past.
    void retire(std::deque<Transfer*>* queue, size_t TcpLane::*at);
    void onBroken() override;

    std::vector<TcpLane> lanes_;
};

}  // namespace hostccl::transport
