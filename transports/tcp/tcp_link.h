// A Link over one non-blocking TCP socket. Each message is a WireHeader followed
// by the payload; sends go out with writev, receives land straight in the user's
// buffer, or (reduce on arrival) in a small staging chunk that is reduced into
// the destination as soon as whole elements are in.
#pragma once

#include <deque>
#include <vector>

#include "core/net/socket.h"
#include "transports/queued_link.h"

namespace hostccl::transport {

class TcpLink final : public QueuedLink {
public:
    TcpLink(uint32_t peer, uint64_t commId, net::Fd fd, std::string peerHost);
    const char* kind() const override { return "tcp"; }
    bool progress() override;
    int pollFd() const override { return fd_.get(); }
    short pollEvents() const override;
    bool kernelPaced() const override { return true; }
    // Looks at the socket without reading (MSG_PEEK): only a whole header counts.
    bool unclaimedHeader(WireHeader* h) const override;

private:
    bool progressSends();
    bool progressRecvs();
    // -1 error (transfer failed), 0 would block, 1 advanced.
    int advanceSend(Transfer* t);
    int advanceRecv(Transfer* t);
    int readPayloadReducing(Transfer* t);
    ssize_t readSome(void* buf, size_t len);
    void onBroken() override;

    net::Fd fd_;
    std::string peerHost_;
    WireHeader outHeader_{};   // header of the send at the head of the queue
    WireHeader inHeader_{};    // header being read for the receive at the head
    size_t inHeaderBytes_ = 0;
    std::vector<char> staging_;
    size_t staged_ = 0;
};

}  // namespace hostccl::transport
