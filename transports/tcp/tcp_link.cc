#include "transports/tcp/tcp_link.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>

namespace hostccl::transport {

TcpLink::TcpLink(uint32_t peer, uint64_t commId, std::vector<net::Fd> fds, const std::string& peerHost)
    : QueuedLink(peer, commId) {
    const auto count = static_cast<uint32_t>(fds.size());
    lanes_.reserve(count);
    for (uint32_t i = 0; i < count; ++i) lanes_.emplace_back(std::move(fds[i]), i, count, peerHost);
}

short TcpLink::eventsOf(const TcpLane& lane) const {
    short ev = 0;
    if (lane.sendAt < sends_.size()) ev |= POLLOUT;
    if (lane.recvAt < recvs_.size()) ev |= POLLIN;
    return ev;
}

bool TcpLink::appendPollFds(std::vector<pollfd>* fds) const {
    for (const TcpLane& lane : lanes_) fds->push_back(pollfd{lane.fd(), eventsOf(lane), 0});
    return true;
}

// TCP_INFO's tcpi_rtt: the kernel's estimate, free to read (no clock on the op's path).
double TcpLink::roundTripUs() const {
    double least = -1;
    for (const TcpLane& lane : lanes_) {
        tcp_info info{};
        socklen_t len = sizeof info;
        if (::getsockopt(lane.fd(), IPPROTO_TCP, TCP_INFO, &info, &len) != 0 || info.tcpi_rtt == 0) continue;
        if (least < 0 || info.tcpi_rtt < least) least = info.tcpi_rtt;
    }
    return least;
}

bool TcpLink::progress() {
    bool moved = progressSends();
    moved |= progressRecvs();
    return moved;
}

bool TcpLink::progressSends() { return progressQueue(&sends_, &TcpLane::sendAt, &TcpLane::advanceSend); }
bool TcpLink::progressRecvs() { return progressQueue(&recvs_, &TcpLane::recvAt, &TcpLane::advanceRecv); }

// Each lane moves its parts as far as its socket takes them, then the next lane;
// then the transfers every lane is past complete.
bool TcpLink::progressQueue(std::deque<Transfer*>* queue, size_t TcpLane::*at, LaneStep step) {
    bool moved = false;
    for (TcpLane& lane : lanes_) {
        while (lane.*at < queue->size()) {
            bool done = false;
            HcclResult code = HCCL_SUCCESS;
            std::string why;
            const int rc = (lane.*step)((*queue)[lane.*at], commId(), &done, &code, &why);
            if (rc < 0) {
                failAll(code, why);
                return true;
            }
            if (rc == 0) break;
            moved = true;
            if (done) ++(lane.*at);
        }
    }
    retire(queue, at);
    return moved;
}

void TcpLink::retire(std::deque<Transfer*>* queue, size_t TcpLane::*at) {
    size_t past = queue->size();
    for (const TcpLane& lane : lanes_) past = std::min(past, lane.*at);
    for (size_t i = 0; i < past; ++i) {
        queue->front()->complete = true;
        queue->pop_front();
    }
    for (TcpLane& lane : lanes_) lane.*at -= past;
}

// A broken stream cannot be resynchronised: shut the sockets so the peer fails at
// once ("connection closed") instead of waiting for its timeout.
void TcpLink::onBroken() {
    for (TcpLane& lane : lanes_) lane.shutdown();
}

bool TcpLink::unclaimedHeader(WireHeader* h) const {
    const TcpLane& first = lanes_.front();
    if (!recvs_.empty() || !first.betweenReceives() || broken()) return false;
    return first.peekHeader(h);
}

}  // namespace hostccl::transport
