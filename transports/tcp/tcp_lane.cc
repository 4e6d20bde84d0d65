#include "transports/tcp/tcp_lane.h"

#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "common/env.h"

namespace hostccl::transport {

namespace {
constexpr size_t kLaneAlign = 4096;
size_t stagingBytes() {
    static const size_t bytes = static_cast<size_t>(env::getInt("HOSTCCL_TCP_CHUNK_BYTES", 4096, 1 << 30));
    return bytes;
}
bool wouldBlock() { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR; }
// A receiver waiting part-way through a message is woken once this much more has
// arrived (or the rest of the part, if less), not at every segment: waking at every
// segment read 16 KiB per recv on average and left the 2 cores idle a third of the
// time between two namespace hosts (64 MiB broadcast, 1 rank per host: 2.0-2.1 GB/s
// woken per segment, 2.7-3.1 woken per 256 KiB).
constexpr size_t kWakeBatchBytes = 256 * 1024;
// Reads of less than kSmallReadBytes (a header, a small payload) refill the inbox with
// up to kInboxBytes: a pipelined 8-byte op is a 56-byte message, so one refill holds
// about 70. Larger reads, such as the staging chunk of a reduce on arrival, go
// straight to their buffer.
constexpr size_t kInboxBytes = 4096;
constexpr size_t kSmallReadBytes = 1024;
}  // namespace

LanePart lanePart(size_t bytes, uint32_t lane, uint32_t lanes) {
    const size_t used = std::clamp<size_t>(bytes / kLaneMinBytes, 1, lanes);
    if (lane >= used) return LanePart{};
    auto boundary = [&](size_t k) { return k == used ? bytes : bytes / used * k / kLaneAlign * kLaneAlign; };
    return LanePart{boundary(lane), boundary(lane + 1) - boundary(lane), true};
}

TcpLane::TcpLane(net::Fd fd, uint32_t index, uint32_t lanes, std::string peerHost)
    : fd_(std::move(fd)), index_(index), lanes_(lanes), peerHost_(std::move(peerHost)) {
    net::setNonBlocking(fd_.get());
    net::setNoDelay(fd_.get());
}

void TcpLane::shutdown() { ::shutdown(fd_.get(), SHUT_RDWR); }

int TcpLane::advanceSend(Transfer* t, uint64_t commId, bool* done, HcclResult* code, std::string* why) {
    const LanePart part = lanePart(t->bytes, index_, lanes_);
    if (!part.carried) {
        *done = true;
        return 1;
    }
    if (sendMoved_ == 0) outHeader_ = makeHeader(commId, t->tag, t->bytes);
    char* payload = static_cast<char*>(const_cast<void*>(t->src)) + part.offset;
    iovec iov[2];
    int n = 0;
    if (sendMoved_ < sizeof(WireHeader)) {
        iov[n++] = {reinterpret_cast<char*>(&outHeader_) + sendMoved_, sizeof(WireHeader) - sendMoved_};
        if (part.bytes > 0) iov[n++] = {payload, part.bytes};
    } else {
        const size_t off = sendMoved_ - sizeof(WireHeader);
        iov[n++] = {payload + off, part.bytes - off};
    }
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = static_cast<size_t>(n);
    const ssize_t sent = ::sendmsg(fd_.get(), &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent < 0) {
        if (wouldBlock()) return 0;
        *code = HCCL_E_TCP_TRANSFER;
        *why = std::string("send to peer failed: ") + std::strerror(errno);
        return -1;
    }
    auto payloadSent = [this] { return sendMoved_ - std::min(sendMoved_, sizeof(WireHeader)); };
    const size_t before = payloadSent();
    sendMoved_ += static_cast<size_t>(sent);
    t->moved += payloadSent() - before;  // a transfer's `moved` counts payload, over all its lanes
    if (sendMoved_ == sizeof(WireHeader) + part.bytes) {
        sendMoved_ = 0;
        *done = true;
    }
    return sent > 0 ? 1 : 0;
}

// Bytes read (> 0), 0 when the socket has nothing now, -1 when the peer closed the
// connection or the socket failed.
ssize_t TcpLane::readSome(void* buf, size_t len, HcclResult* code, std::string* why) {
    const ssize_t got = ::recv(fd_.get(), buf, len, MSG_DONTWAIT);
    if (got > 0) return got;
    if (got < 0 && wouldBlock()) return 0;
    *code = HCCL_E_TCP_TRANSFER;
    *why = got == 0 ? "connection closed by peer (" + peerHost_ + ")"
                    : std::string("receive from peer failed: ") + std::strerror(errno);
    return -1;
}

ssize_t TcpLane::take(void* buf, size_t len, HcclResult* code, std::string* why) {
    if (inboxAt_ == inboxEnd_) {
        if (len >= kSmallReadBytes) return readSome(buf, len, code, why);
        if (!inbox_) inbox_ = std::make_unique<char[]>(kInboxBytes);
        const ssize_t got = readSome(inbox_.get(), kInboxBytes, code, why);
        if (got <= 0) return got;
        inboxAt_ = 0;
        inboxEnd_ = static_cast<size_t>(got);
    }
    const size_t n = std::min(len, inboxEnd_ - inboxAt_);
    std::memcpy(buf, inbox_.get() + inboxAt_, n);
    inboxAt_ += n;
    return static_cast<ssize_t>(n);
}

bool TcpLane::peekHeader(WireHeader* h) const {
    char* out = reinterpret_cast<char*>(h);
    const size_t held = std::min(inboxEnd_ - inboxAt_, sizeof *h);
    if (held > 0) std::memcpy(out, inbox_.get() + inboxAt_, held);
    const size_t rest = sizeof *h - held;
    return rest == 0 || ::recv(fd_.get(), out + held, rest, MSG_PEEK | MSG_DONTWAIT) == ssize_t(rest);
}

// SO_RCVLOWAT: poll() reports the socket readable, and the kernel wakes a waiter, only
// once that many bytes are queued (at most kWakeBatchBytes; a closed or failed socket
// wakes it regardless). Raised mid-part when the socket is drained, to the bytes
// still expected; back to 1 when the part is in. Set only when it changes: a system
// call once per wait, not per pass.
void TcpLane::setWakeBytes(size_t bytes) {
    const int want = static_cast<int>(std::clamp<size_t>(bytes, 1, kWakeBatchBytes));
    if (want == wakeBytes_) return;
    if (::setsockopt(fd_.get(), SOL_SOCKET, SO_RCVLOWAT, &want, sizeof want) == 0) wakeBytes_ = want;
}

void TcpLane::finishReceive(bool* done) {
    setWakeBytes(1);  // the next header, however small, must wake a waiter at once
    inHeaderDone_ = false;
    recvMoved_ = 0;
    staged_ = 0;
    *done = true;
}

int TcpLane::advanceRecv(Transfer* t, uint64_t commId, bool* done, HcclResult* code, std::string* why) {
    const LanePart part = lanePart(t->bytes, index_, lanes_);
    if (!part.carried) {
        *done = true;
        return 1;
    }
    if (!inHeaderDone_) {
        const ssize_t got = take(reinterpret_cast<char*>(&inHeader_) + inHeaderBytes_,
                                 sizeof(WireHeader) - inHeaderBytes_, code, why);
        if (got <= 0) return static_cast<int>(got);
        inHeaderBytes_ += static_cast<size_t>(got);
        if (inHeaderBytes_ < sizeof(WireHeader)) return 1;
        inHeaderBytes_ = 0;
        // Nothing from the wire is trusted: the length must be exactly what was posted.
        *why = headerMismatch(inHeader_, commId, t->tag, t->bytes);
        if (!why->empty()) {
            *code = HCCL_E_PARA;
            return -1;
        }
        inHeaderDone_ = true;
    }
    if (recvMoved_ < part.bytes) {
        if (t->reduce != nullptr) {
            const int rc = readPayloadReducing(t, part, code, why);
            if (rc <= 0) return rc;
        } else {
            const ssize_t got =
                take(static_cast<char*>(t->dst) + part.offset + recvMoved_, part.bytes - recvMoved_, code, why);
            if (got == 0) setWakeBytes(part.bytes - recvMoved_);
            if (got <= 0) return static_cast<int>(got);
            recvMoved_ += static_cast<size_t>(got);
            t->moved += static_cast<size_t>(got);
        }
    }
    if (recvMoved_ == part.bytes) finishReceive(done);
    return 1;
}

// Reads into the staging chunk and reduces every whole element that has arrived;
// a partial element waits at the front of the chunk for the rest of its bytes.
int TcpLane::readPayloadReducing(Transfer* t, const LanePart& part, HcclResult* code, std::string* why) {
    if (staging_.size() < stagingBytes()) staging_.resize(stagingBytes());
    const size_t pending = part.bytes - recvMoved_;  // bytes not yet reduced
    const size_t want = std::min(staging_.size() - staged_, pending - staged_);
    const ssize_t got = take(staging_.data() + staged_, want, code, why);
    if (got == 0) setWakeBytes(want);
    if (got <= 0) return static_cast<int>(got);
    staged_ += static_cast<size_t>(got);
    const size_t whole = staged_ / t->elemSize * t->elemSize;
    if (whole > 0) {
        const size_t at = part.offset + recvMoved_;
        t->reduce(static_cast<char*>(t->dst) + at, static_cast<const char*>(t->local) + at, staging_.data(),
                  whole / t->elemSize);
        recvMoved_ += whole;
        t->moved += whole;
        staged_ -= whole;
        if (staged_ > 0) std::memmove(staging_.data(), staging_.data() + whole, staged_);
    }
    return 1;
}

}  // namespace hostccl::transport
