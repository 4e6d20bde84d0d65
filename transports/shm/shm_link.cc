#include "transports/shm/shm_link.h"

#include <sys/socket.h>
#include <unistd.h>

#include <cstring>
#include <thread>

#include "common/process_state.h"

namespace hostccl::transport {

using namespace shm;

namespace {
// Below this, copying through the slots costs less than the ack round trip.
constexpr size_t kDirectMinBytes = 64 * 1024;
}  // namespace

ShmLink::ShmLink(uint32_t peer, uint64_t commId, Mapping mapping, int outbound, net::Fd control, std::string peerHost,
                 uint32_t peerPid)
    : QueuedLink(peer, commId),
      mapping_(std::move(mapping)),
      out_(&mapping_.get()->ring[outbound]),
      in_(&mapping_.get()->ring[1 - outbound]),
      myBell_(&mapping_.get()->bell[outbound]),
      peerBell_(&mapping_.get()->bell[1 - outbound]),
      control_(std::move(control)),
      peerInProcess_(peerPid == static_cast<uint32_t>(getpid())),
      peerPid_(peerPid),
      produced_(out_->head.value.load(std::memory_order_relaxed)),
      consumed_(in_->tail.value.load(std::memory_order_relaxed)),
      peerHost_(std::move(peerHost)) {
    if (control_.valid()) net::setNonBlocking(control_.get());
}

bool ShmLink::progress() {
    // A sleeping peer hears of what was sent before this side starts a receive, which
    // may be a single copy of many megabytes: rung only after it, a peer that arrived
    // first would start its own copy when this one is done instead of beside it.
    const bool sent = progressSends();
    if (sent) ringPeer();
    const bool received = progressRecvs();
    if (received) ringPeer();
    else if (!sent && !idle()) checkPeerAlive();
    return sent || received;
}

// The bell is
// touched only when the peer sleeps; while both sides spin, a message costs no
// cache-line transfer beyond the ring's own words. The fences pair with those in
// waitForActivity: either the sleeper's re-check sees this side's writes, or this
// side sees `asleep` and rings.
void ShmLink::ringPeer() {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (peerBell_->asleep.load(std::memory_order_relaxed) == 0) return;
    peerBell_->rings.fetch_add(1, std::memory_order_seq_cst);
    wakeWord(&peerBell_->rings);
}

// `stamp` was read before the caller's last progress pass; if the peer acted since,
// the stamp moved and the caller must not sleep.
bool ShmLink::beginSleep(uint32_t stamp, SleepWord* word) {
    // A sleeper makes few progress passes: it checks the peer on its way down, so a
    // dead peer is noticed within a sleep slice, not after 256 of them.
    idleChecks_ = 255;
    checkPeerAlive();
    if (broken()) return false;
    myBell_->asleep.fetch_add(1, std::memory_order_seq_cst);
    word->word = &myBell_->rings;
    word->value = myBell_->rings.load(std::memory_order_seq_cst);
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (activityStamp() == stamp) return true;
    endSleep();
    return false;
}

bool ShmLink::progressSends() {
    bool moved = false;
    while (!sends_.empty()) {
        Transfer* t = sends_.front();
        if (t->directSeq != 0) {  // single copy: done once the peer has read it
            if (out_->acked.value.load(std::memory_order_acquire) < t->directSeq) break;
            t->moved = t->bytes;
            t->complete = true;
            moved = true;
        } else if (!t->headerDone && t->bytes >= kDirectMinBytes && writeDescriptor(t)) {
            moved = true;
            continue;  // wait for the ack above
        } else {
            moved |= writeFragments(t);
        }
        if (!t->complete) break;
        sends_.pop_front();
    }
    return moved;
}

// Posts where the data is instead of the data. Shareable: any address when the peer
// is a thread of this process, else an aclrtMalloc allocation (memfd-backed).
bool ShmLink::writeDescriptor(Transfer* t) {
    DirectDescriptor d{};
    d.region = describeRegion(t->src, t->bytes);
    if (!peerInProcess_ && !mappableByOtherProcesses(d.region)) return false;
    const uint64_t head = produced_;
    if (ringFull(head) || payloadSlotBusy()) return false;  // retry inline later
    d.seq = ++directSent_;
    SlotHeader* h = out_->header(head);
    h->describe(sizeof d, kFirstFragment | kDirect);
    h->tag = t->tag;
    h->bytes = t->bytes;
    std::memcpy(takePayloadSlot(head), &d, sizeof d);
    t->headerDone = true;
    t->directSeq = d.seq;
    out_->publish(produced_++);
    return true;
}

bool ShmLink::unclaimedHeader(WireHeader* h) const {
    if (!recvs_.empty() || broken()) return false;
    if (!in_->arrived(consumed_)) return false;
    const SlotHeader* slot = in_->header(consumed_);
    if ((slot->flags() & kFirstFragment) == 0) return false;
    *h = makeHeader(commId(), slot->tag, slot->bytes);
    return true;
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

// The consumer's tail is read only when the slots known free run out: it is a line
// the peer writes after every fragment, and reading it per send would wait for it.
bool ShmLink::ringFull(uint64_t head) {
    if (head - tailSeen_ < kSlots) return false;
    tailSeen_ = out_->tail.value.load(std::memory_order_acquire);
    return head - tailSeen_ >= kSlots;
}

// The payload slot the next payload-carrying fragment takes is still unread. Like the
// header slots, it reads the consumer's tail only when the last value read says so.
bool ShmLink::payloadSlotBusy() {
    if (payloadsWritten_ < kPayloadSlots) return false;
    const uint64_t lastWriter = payloadWriter_[payloadsWritten_ % kPayloadSlots];
    if (tailSeen_ > lastWriter) return false;
    tailSeen_ = out_->tail.value.load(std::memory_order_acquire);
    return tailSeen_ <= lastWriter;
}

unsigned char* ShmLink::takePayloadSlot(uint64_t fragment) {
    payloadWriter_[payloadsWritten_ % kPayloadSlots] = fragment;
    return out_->payload(payloadsWritten_++);
}

// Fills free slots with the next fragments; a zero-byte message still takes a header
// slot so its header (and the op check) reaches the peer.
bool ShmLink::writeFragments(Transfer* t) {
    bool wrote = false;
    uint64_t& head = produced_;
    const bool inlined = t->bytes <= kInlineBytes;
    while (!t->complete) {
        if (ringFull(head) || (!inlined && payloadSlotBusy())) break;
        SlotHeader* h = out_->header(head);
        size_t n = std::min(kSlotPayload, t->bytes - t->moved);
        h->describe(n, (t->headerDone ? 0 : kFirstFragment) | (inlined ? kInline : 0));
        if (!t->headerDone) {
            h->tag = t->tag;
            h->bytes = t->bytes;
        }
        unsigned char* to = inlined ? h->inlineData : takePayloadSlot(head);
        if (n > 0) std::memcpy(to, static_cast<const char*>(t->src) + t->moved, n);
        t->headerDone = true;
        t->moved += n;
        out_->publish(head++);
        wrote = true;
        if (t->moved == t->bytes) t->complete = true;
    }
    return wrote;
}

int ShmLink::readFragments(Transfer* t) {
    int advanced = 0;
    uint64_t& tail = consumed_;
    while (!t->complete && in_->arrived(tail)) {
        const SlotHeader* h = in_->header(tail);
        const bool first = !t->headerDone;
        if (first && !(h->flags() & kFirstFragment)) {
            failAll(HCCL_E_PARA, "peer sent a fragment out of order");
            return -1;
        }
        if (first && !sameMessage(h->tag, h->bytes, t->tag, t->bytes)) {
            failAll(HCCL_E_PARA, headerMismatch(makeHeader(commId(), h->tag, h->bytes), commId(), t->tag, t->bytes));
            return -1;
        }
        t->headerDone = true;
        if (first && (h->flags() & kDirect)) return readDirect(t, h, in_->payload(payloadsRead_));
        const size_t n = h->fragBytes();
        if ((!first && (h->flags() & kFirstFragment)) || n > t->bytes - t->moved ||
            ((h->flags() & kInline) && n > kInlineBytes)) {
            failAll(HCCL_E_PARA, "peer sent a malformed fragment");
            return -1;
        }
        const bool inlined = h->flags() & kInline;
        const unsigned char* src = inlined ? h->inlineData : in_->payload(payloadsRead_);
        char* dst = static_cast<char*>(t->dst) + t->moved;
        if (t->reduce != nullptr)
            t->reduce(dst, static_cast<const char*>(t->local) + t->moved, src, n / t->elemSize);
        else if (n > 0)
            std::memcpy(dst, src, n);
        t->moved += n;
        payloadsRead_ += inlined ? 0 : 1;
        in_->tail.value.store(++tail, std::memory_order_release);
        advanced = 1;
        if (t->moved == t->bytes) t->complete = true;
    }
    return advanced;
}

// Single copy: copy or reduce straight from the sender's buffer, release the slot
// and ack, which completes the sender's transfer.
int ShmLink::readDirect(Transfer* t, const SlotHeader* h, const unsigned char* payload) {
    DirectDescriptor d;
    if (h->fragBytes() != sizeof d) {
        failAll(HCCL_E_PARA, "peer sent a malformed single-copy descriptor");
        return -1;
    }
    std::memcpy(&d, payload, sizeof d);
    // Announce the read, then check the sender still stands by it; the sender
    // withdraws, then checks for a read under way (both sequentially consistent:
    // at least one of the two sees the other).
    in_->reading.value.store(d.seq, std::memory_order_seq_cst);
    if (in_->withdrawn.value.load(std::memory_order_seq_cst) >= d.seq) {
        in_->reading.value.store(0, std::memory_order_release);
        failAll(HCCL_E_REMOTE, "peer's op failed and took back its single-copy send before it was read");
        return -1;
    }
    std::string why;
    const char* src = d.region.bytes == t->bytes ? mapPeerRegion(d.region, &why) : nullptr;
    if (src == nullptr) {
        in_->reading.value.store(0, std::memory_order_release);
        if (why.empty()) why = "peer sent a single-copy descriptor of the wrong size";
        failAll(HCCL_E_INTERNAL, why);
        return -1;
    }
    if (t->reduce != nullptr)
        t->reduce(t->dst, t->local, src, t->bytes / t->elemSize);
    else
        std::memcpy(t->dst, src, t->bytes);
    t->moved = t->bytes;
    t->complete = true;
    ++payloadsRead_;
    in_->tail.value.store(++consumed_, std::memory_order_release);
    in_->acked.value.store(d.seq, std::memory_order_release);
    in_->reading.value.store(0, std::memory_order_release);
    return 1;
}

char* ShmLink::mapPeerRegion(const SharedRegion& r, std::string* why) {
    if (peerInProcess_) return reinterpret_cast<char*>(r.address);
    return peerMemory_.resolve(r, why);
}

// Closing our end of the control socket tells the peer at once.
void ShmLink::onBroken() {
    if (control_.valid()) ::shutdown(control_.get(), SHUT_RDWR);
    withdrawDirectSends();
}

// A link breaks (or goes away) when its op failed, and the op's caller may free its
// buffers the moment it returns: single-copy sends the peer has not read are taken
// back, and a read already under way is waited out. A peer thread of this process
// would otherwise copy from freed memory; its read is a copy or a reduction running
// on a live thread, so it ends. Another process keeps the pages mapped, so waiting
// for it is bounded (it may have died mid-read).
void ShmLink::withdrawDirectSends() {
    if (directSent_ == out_->acked.value.load(std::memory_order_acquire)) return;
    out_->withdrawn.value.store(directSent_, std::memory_order_seq_cst);
    const auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(1);
    while (out_->reading.value.load(std::memory_order_seq_cst) != 0) {
        if (!peerInProcess_ && (std::chrono::steady_clock::now() > giveUp || peerProcessGone())) break;
        std::this_thread::yield();
    }
}

// A peer that died mid-read never clears `reading`: without this, destroying after
// its death waited out the whole second (1.15 s seen, 4 ranks, the victim killed
// during a single-copy read). Both signs are asked for: the control socket's end is
// closed (a live peer that shut its link down closes it too) and its process has ended.
bool ShmLink::peerProcessGone() const {
    if (!control_.valid()) return false;
    char byte;
    if (::recv(control_.get(), &byte, 1, MSG_PEEK | MSG_DONTWAIT) != 0) return false;
    return processEnded(static_cast<pid_t>(peerPid_));
}

// The peer's end of the control socket closes when its process exits.
void ShmLink::checkPeerAlive() {
    if (!control_.valid()) return;  // a peer in this process shares our fate
    if (++idleChecks_ % 256 != 0) return;  // the clock read below is not free
    auto now = std::chrono::steady_clock::now();
    if (now - lastLivenessCheck_ < std::chrono::milliseconds(50)) return;
    lastLivenessCheck_ = now;
    char byte;
    ssize_t got = ::recv(control_.get(), &byte, 1, MSG_PEEK | MSG_DONTWAIT);
    if (got == 0 || (got < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
        failAll(HCCL_E_TCP_TRANSFER, "peer process exited or closed its connection (" + peerHost_ + ")");
}

}  // namespace hostccl::transport
