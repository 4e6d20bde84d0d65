#include "transports/tcp/tcp_link.h"

#include <poll.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include <cerrno>
#include <cstring>

#include "common/env.h"

namespace hostccl::transport {

namespace {
size_t stagingBytes() {
    static const size_t bytes = static_cast<size_t>(env::getInt("HOSTCCL_TCP_CHUNK_BYTES", 4096, 1 << 30));
    return bytes;
}
bool wouldBlock() { return errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR; }
}  // namespace

TcpLink::TcpLink(uint32_t peer, uint64_t commId, net::Fd fd, std::string peerHost)
    : QueuedLink(peer, commId), fd_(std::move(fd)), peerHost_(std::move(peerHost)) {
    net::setNonBlocking(fd_.get());
    net::setNoDelay(fd_.get());
}

short TcpLink::pollEvents() const {
    short ev = 0;
    if (!sends_.empty()) ev |= POLLOUT;
    if (!recvs_.empty()) ev |= POLLIN;
    return ev;
}

bool TcpLink::progress() {
    bool moved = progressSends();
    moved |= progressRecvs();
    return moved;
}

bool TcpLink::progressSends() {
    bool moved = false;
    while (!sends_.empty()) {
        int rc = advanceSend(sends_.front());
        if (rc < 0) return true;  // failAll ran
        if (rc == 0) break;
        moved = true;
        if (sends_.front()->complete) sends_.pop_front();
    }
    return moved;
}

bool TcpLink::progressRecvs() {
    bool moved = false;
    while (!recvs_.empty()) {
        int rc = advanceRecv(recvs_.front());
        if (rc < 0) return true;
        if (rc == 0) break;
        moved = true;
        if (recvs_.front()->complete) recvs_.pop_front();
    }
    return moved;
}

// A broken stream cannot be resynchronised: shut the socket so the peer fails at
// once ("connection closed") instead of waiting for its timeout.
void TcpLink::onBroken() { ::shutdown(fd_.get(), SHUT_RDWR); }

int TcpLink::advanceSend(Transfer* t) {
    if (t->moved == 0 && !t->headerDone) {
        outHeader_ = makeHeader(commId(), t->tag, t->bytes);
        t->headerDone = true;  // header is now "in flight"; `moved` counts header + payload
    }
    const size_t total = sizeof(WireHeader) + t->bytes;
    iovec iov[2];
    int n = 0;
    if (t->moved < sizeof(WireHeader)) {
        iov[n++] = {reinterpret_cast<char*>(&outHeader_) + t->moved, sizeof(WireHeader) - t->moved};
        if (t->bytes > 0) iov[n++] = {const_cast<void*>(t->src), t->bytes};
    } else {
        size_t off = t->moved - sizeof(WireHeader);
        iov[n++] = {static_cast<char*>(const_cast<void*>(t->src)) + off, t->bytes - off};
    }
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = static_cast<size_t>(n);
    ssize_t sent = ::sendmsg(fd_.get(), &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (sent < 0) {
        if (wouldBlock()) return 0;
        failAll(HCCL_E_TCP_TRANSFER, std::string("send to peer failed: ") + std::strerror(errno));
        return -1;
    }
    t->moved += static_cast<size_t>(sent);
    if (t->moved == total) t->complete = true;
    return sent > 0 ? 1 : 0;
}

// Bytes read (> 0), 0 when the socket has nothing now, -1 after failing the link
// (the peer closed the connection or the socket failed).
ssize_t TcpLink::readSome(void* buf, size_t len) {
    ssize_t got = ::recv(fd_.get(), buf, len, MSG_DONTWAIT);
    if (got > 0) return got;
    if (got < 0 && wouldBlock()) return 0;
    failAll(HCCL_E_TCP_TRANSFER, got == 0 ? "connection closed by peer (" + peerHost_ + ")"
                                          : std::string("receive from peer failed: ") + std::strerror(errno));
    return -1;
}

bool TcpLink::unclaimedHeader(WireHeader* h) const {
    if (!recvs_.empty() || inHeaderBytes_ != 0 || broken()) return false;
    return ::recv(fd_.get(), h, sizeof *h, MSG_PEEK | MSG_DONTWAIT) == ssize_t(sizeof *h);
}

int TcpLink::advanceRecv(Transfer* t) {
    if (!t->headerDone) {
        ssize_t got = readSome(reinterpret_cast<char*>(&inHeader_) + inHeaderBytes_, sizeof(WireHeader) - inHeaderBytes_);
        if (got <= 0) return static_cast<int>(got);
        inHeaderBytes_ += static_cast<size_t>(got);
        if (inHeaderBytes_ < sizeof(WireHeader)) return 1;
        inHeaderBytes_ = 0;
        // Nothing from the wire is trusted: the length must be exactly what was posted.
        std::string mismatch = headerMismatch(inHeader_, commId(), t->tag, t->bytes);
        if (!mismatch.empty()) {
            failAll(HCCL_E_PARA, mismatch);
            return -1;
        }
        t->headerDone = true;
        staged_ = 0;
    }
    if (t->moved < t->bytes) {
        if (t->reduce != nullptr) return readPayloadReducing(t);
        ssize_t got = readSome(static_cast<char*>(t->dst) + t->moved, t->bytes - t->moved);
        if (got <= 0) return static_cast<int>(got);
        t->moved += static_cast<size_t>(got);
    }
    if (t->moved == t->bytes) t->complete = true;
    return 1;
}

// Reads into the staging chunk and reduces every whole element that has arrived;
// a partial element waits at the front of the chunk for the rest of its bytes.
int TcpLink::readPayloadReducing(Transfer* t) {
    if (staging_.size() < stagingBytes()) staging_.resize(stagingBytes());
    size_t pending = t->bytes - t->moved;  // bytes not yet reduced
    size_t want = std::min(staging_.size() - staged_, pending - staged_);
    ssize_t got = readSome(staging_.data() + staged_, want);
    if (got <= 0) return static_cast<int>(got);
    staged_ += static_cast<size_t>(got);
    size_t whole = staged_ / t->elemSize * t->elemSize;
    if (whole > 0) {
        char* dst = static_cast<char*>(t->dst) + t->moved;
        const char* local = static_cast<const char*>(t->local) + t->moved;
        t->reduce(dst, local, staging_.data(), whole / t->elemSize);
        t->moved += whole;
        staged_ -= whole;
        if (staged_ > 0) std::memmove(staging_.data(), staging_.data() + whole, staged_);
    }
    if (t->moved == t->bytes) t->complete = true;
    return 1;
}

}  // namespace hostccl::transport
