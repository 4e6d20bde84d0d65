#include "transports/shm/shm_link.h"

#include <sys/socket.h>

#include <cstring>

namespace hostccl::transport {

using namespace shm;

ShmLink::ShmLink(uint32_t peer, uint64_t commId, Mapping mapping, int outbound, net::Fd control, std::string peerHost)
    : QueuedLink(peer, commId),
      mapping_(std::move(mapping)),
      out_(&mapping_.get()->ring[outbound]),
      in_(&mapping_.get()->ring[1 - outbound]),
      control_(std::move(control)),
      peerHost_(std::move(peerHost)) {
    net::setNonBlocking(control_.get());
}

bool ShmLink::progress() {
    bool moved = progressSends();
    moved |= progressRecvs();
    if (!moved && !idle()) checkPeerAlive();
    return moved;
}

bool ShmLink::progressSends() {
    bool moved = false;
    while (!sends_.empty()) {
        Transfer* t = sends_.front();
        moved |= writeFragments(t);
        if (!t->complete) break;
        sends_.pop_front();
    }
    return moved;
}

bool ShmLink::progressRecvs() {
    bool moved = false;
    while (!recvs_.empty()) {
        int rc = readFragments(recvs_.front());
        if (rc < 0) return true;
        moved |= rc > 0;
        if (!recvs_.front()->complete) break;
        recvs_.pop_front();
    }
    return moved;
}

// Fills free slots with the next fragments; a zero-byte message still takes one
// slot so its header (and the op check) reaches the peer.
bool ShmLink::writeFragments(Transfer* t) {
    bool wrote = false;
    uint64_t head = out_->head.value.load(std::memory_order_relaxed);
    while (!t->complete) {
        if (head - out_->tail.value.load(std::memory_order_acquire) >= kSlots) break;  // ring full
        SlotHeader* h = out_->header(head);
        size_t n = std::min(kSlotPayload, t->bytes - t->moved);
        h->fragBytes = static_cast<uint32_t>(n);
        h->first = t->headerDone ? 0 : 1;
        if (!t->headerDone) h->msg = makeHeader(commId(), t->tag, t->bytes);
        if (n > 0) std::memcpy(out_->payload(head), static_cast<const char*>(t->src) + t->moved, n);
        t->headerDone = true;
        t->moved += n;
        out_->head.value.store(++head, std::memory_order_release);
        wrote = true;
        if (t->moved == t->bytes) t->complete = true;
    }
    return wrote;
}

int ShmLink::readFragments(Transfer* t) {
    int advanced = 0;
    uint64_t tail = in_->tail.value.load(std::memory_order_relaxed);
    while (!t->complete && tail != in_->head.value.load(std::memory_order_acquire)) {
        const SlotHeader* h = in_->header(tail);
        if (!t->headerDone) {
            std::string mismatch =
                h->first ? headerMismatch(h->msg, commId(), t->tag, t->bytes) : "peer sent a fragment out of order";
            if (!mismatch.empty()) {
                failAll(HCCL_E_PARA, mismatch);
                return -1;
            }
            t->headerDone = true;
        } else if (h->first || h->fragBytes > t->bytes - t->moved) {
            failAll(HCCL_E_PARA, "peer sent a malformed fragment");
            return -1;
        }
        size_t n = h->fragBytes;
        const unsigned char* src = in_->payload(tail);
        char* dst = static_cast<char*>(t->dst) + t->moved;
        if (t->reduce != nullptr)
            t->reduce(dst, static_cast<const char*>(t->local) + t->moved, src, n / t->elemSize);
        else if (n > 0)
            std::memcpy(dst, src, n);
        t->moved += n;
        in_->tail.value.store(++tail, std::memory_order_release);
        advanced = 1;
        if (t->moved == t->bytes) t->complete = true;
    }
    return advanced;
}

// Closing our end of the control socket tells the peer at once.
void ShmLink::onBroken() { ::shutdown(control_.get(), SHUT_RDWR); }

// The peer's end of the control socket closes when its process exits.
void ShmLink::checkPeerAlive() {
    auto now = std::chrono::steady_clock::now();
    if (now - lastLivenessCheck_ < std::chrono::milliseconds(50)) return;
    lastLivenessCheck_ = now;
    char byte;
    ssize_t got = ::recv(control_.get(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
        failAll(HCCL_E_TCP_TRANSFER, "peer process exited or closed its connection (" + peerHost_ + ")");
}

}  // namespace hostccl::transport
