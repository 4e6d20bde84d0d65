// A Link over one non-blocking TCP socket. Each message is a WireHeader followed
// by the payload; sends go out with writev, receives land straight in the user's
// buffer, or (reduce on arrival) in a small staging chunk that is reduced into
// the destination as soon as whole elements are in.
#pragma once

#include <deque>
#include <vector>

#include "core/net/socket.h"
#include "transports/link.h"

namespace hostccl::transport {

class TcpLink final : public Link {
public:
    TcpLink(uint32_t peer, uint64_t commId, net::Fd fd, std::string peerHost);
    const char* kind() const override { return "tcp"; }
    void post(Transfer* t) override;
    bool progress() override;
    int pollFd() const override { return fd_.get(); }
    short pollEvents() const override;
    void shutdown(HcclResult code, const std::string& why) override;

private:
    bool progressSends();
    bool progressRecvs();
    // -1 error (transfer failed), 0 would block, 1 advanced.
    int advanceSend(Transfer* t);
    int advanceRecv(Transfer* t);
    int readPayloadReducing(Transfer* t);
    ssize_t readSome(void* buf, size_t len);
    void failAll(HcclResult code, const std::string& why);

    net::Fd fd_;
    std::string peerHost_;
    std::deque<Transfer*> sends_;
    std::deque<Transfer*> recvs_;
    WireHeader outHeader_{};   // header of the send at the head of the queue
    WireHeader inHeader_{};    // header being read for the receive at the head
    size_t inHeaderBytes_ = 0;
    std::vector<char> staging_;
    size_t staged_ = 0;
    HcclResult broken_ = HCCL_SUCCESS;
    std::string brokenWhy_;
};

}  // namespace hostccl::transport
