// One socket of a TCP link. A link may stripe large messages over several sockets
// ("lanes", HOSTCCL_TCP_SOCKETS): between two hosts on veth, one socket's kernel
// work serialises on its lock (the receiver's copy holds it while the sender's
// acks wait in its backlog), and two sockets moved 13-20 % more each way. Each lane
// carries, in posting order, its part of every message with a header of its own
// (the whole message's tag and size, so every lane checks what it carries), and
// keeps its own place in the link's queues: lanes run ahead of each other, and a
// message is complete when every lane is past it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "common/net/socket.h"
#include "transports/link.h"

namespace hostccl::transport {

// The part of a message of `bytes` that lane `lane` of `lanes` carries: contiguous,
// split at 4 KiB boundaries (whole elements of every type, for reducing on
// arrival); messages under kLaneMinBytes per lane use fewer lanes, down to lane 0
// alone, which always carries a part (a header at least).
struct LanePart {
    size_t offset = 0;
    size_t bytes = 0;
    bool carried = false;  // false: this lane skips the message
};
constexpr size_t kLaneMinBytes = 512 * 1024;
LanePart lanePart(size_t bytes, uint32_t lane, uint32_t lanes);

class TcpLane {
public:
    // `peerHost` names the peer when its end closes.
    TcpLane(net::Fd fd, uint32_t index, uint32_t lanes, std::string peerHost);
    int fd() const { return fd_.get(); }
    void shutdown();

    // -1 failed (`*code`, `*why` set; the link breaks), 0 would block, 1 advanced.
    // `t` is the transfer this lane's cursor is on; when the lane is done with it
    // (its part moved, or it carries none), `*done` becomes true.
    int advanceSend(Transfer* t, uint64_t commId, bool* done, HcclResult* code, std::string* why);
    int advanceRecv(Transfer* t, uint64_t commId, bool* done, HcclResult* code, std::string* why);
    // A whole header waiting (in the inbox, then on the socket), read without consuming it.
    bool peekHeader(WireHeader* h) const;
    // Between messages on the receiving side (no header half read).
    bool betweenReceives() const { return inHeaderBytes_ == 0 && !inHeaderDone_; }

    size_t sendAt = 0;  // index in the link's send queue of the transfer this lane is on
    size_t recvAt = 0;  // the same for receives

private:
    int readPayloadReducing(Transfer* t, const LanePart& part, HcclResult* code, std::string* why);
    ssize_t readSome(void* buf, size_t len, HcclResult* code, std::string* why);
    // Up to `len` received bytes: from the inbox while it holds any; a small read refills
    // it with one recv, a larger one goes straight into `buf`.
    ssize_t take(void* buf, size_t len, HcclResult* code, std::string* why);
    void finishReceive(bool* done);
    // How many queued bytes make the socket readable (see the definition).
    void setWakeBytes(size_t bytes);

    net::Fd fd_;
    uint32_t index_, lanes_;
    std::string peerHost_;
    WireHeader outHeader_{};
    size_t sendMoved_ = 0;  // header + payload bytes of the current part sent
    WireHeader inHeader_{};
    size_t inHeaderBytes_ = 0;
    bool inHeaderDone_ = false;
    size_t recvMoved_ = 0;  // payload bytes of the current part received (and reduced)
    int wakeBytes_ = 1;  // the socket's SO_RCVLOWAT
    std::vector<char> staging_;
    size_t staged_ = 0;
    // Bytes read off the socket ahead of the receives that claim them (see take): a run
    // of small messages waiting on the socket is read with one system call, not two per
    // message. Allocated at the first small read.
    std::unique_ptr<char[]> inbox_;
    size_t inboxAt_ = 0, inboxEnd_ = 0;
};

}  // namespace hostccl::transport
