// A Link between two ranks on one host, over a pair of shared-memory rings. The
// authenticated TCP connection that set it up is kept as a liveness channel: when
// the peer process dies its end closes, and pending transfers fail instead of
// waiting for the op deadline. Two ranks of one process need no such channel (they
// share their fate): their link has no socket at all.
#pragma once

#include <array>
#include <chrono>
#include <deque>

#include "common/net/socket.h"
#include "transports/queued_link.h"
#include "transports/shm/peer_memory.h"
#include "transports/shm/shm_segment.h"

namespace hostccl::transport {

class ShmLink final : public QueuedLink {
public:
    // `outbound` indexes the segment's ring this side writes; `peerPid` tells
    // whether the peer shares this address space (single copy by pointer);
    // `control` is invalid between two ranks of this process.
    ShmLink(uint32_t peer, uint64_t commId, shm::Mapping mapping, int outbound, net::Fd control, std::string peerHost,
            uint32_t peerPid);
    ~ShmLink() override { withdrawDirectSends(); }
    LinkClass linkClass() const override { return LinkClass::Shm; }
    bool progress() override;
    int pollFd() const override { return -1; }  // data arrives in memory, not on a socket
    short pollEvents() const override { return 0; }
    // The words only the peer writes (data arrived, slots freed, single copies read):
    // every peer action moves their sum, so the stamp needs no extra shared write.
    uint32_t activityStamp() const override {
        return static_cast<uint32_t>(in_->head.value.load(std::memory_order_acquire) +
                                     out_->tail.value.load(std::memory_order_acquire) +
                                     out_->acked.value.load(std::memory_order_acquire));
    }
    bool canSleep() const override { return true; }
    bool beginSleep(uint32_t stamp, SleepWord* word) override;
    void endSleep() override { myBell_->asleep.fetch_sub(1, std::memory_order_seq_cst); }
    void wakeWaiter() override {
        myBell_->rings.fetch_add(1, std::memory_order_seq_cst);
        wakeWord(&myBell_->rings);
    }
    bool sharesMemory() const override { return true; }
    char* mapPeerRegion(const SharedRegion& r, std::string* why) override;
    bool unclaimedHeader(WireHeader* h) const override;

private:
    bool progressSends();
    bool progressRecvs();
    bool writeFragments(Transfer* t);  // true if any fragment was written
    bool writeDescriptor(Transfer* t);  // single copy: false when the data cannot be shared
    bool ringFull(uint64_t head);      // every slot up to `head` still unread
    int readFragments(Transfer* t);    // -1 failed, 0 nothing, 1 advanced
    int readDirect(Transfer* t, const shm::SlotHeader* h, const unsigned char* payload);
    bool payloadSlotBusy();
    unsigned char* takePayloadSlot(uint64_t fragment);
    void checkPeerAlive();
    void withdrawDirectSends();
    bool peerProcessGone() const;  // its process exited (not just its link shut)
    void ringPeer();  // after any change the peer may be waiting for
    void onBroken() override;
    void onAbandoned() override { withdrawDirectSends(); }

    shm::Mapping mapping_;
    shm::Ring* out_;
    shm::Ring* in_;
    shm::Bell* myBell_;
    shm::Bell* peerBell_;
    net::Fd control_;
    bool peerInProcess_;
    uint32_t peerPid_;
    shm::PeerMemory peerMemory_;
    uint64_t directSent_ = 0;
    uint64_t tailSeen_ = 0;  // the consumer's tail when last read (it only grows)
    // This side's own counters, kept here too: it alone writes them, and a load of the
    // shared word after the peer read it waits for the line (the consumer's load of its
    // tail, polled by a producer with a full ring, was 13 % of its time per 8-byte op).
    uint64_t produced_;  // out_->head
    uint64_t consumed_;  // in_->tail
    // Payload slots, used in turn by the fragments that carry one: how many this side
    // wrote and read, and which fragment last wrote each slot (free once consumed).
    uint64_t payloadsWritten_ = 0;
    uint64_t payloadsRead_ = 0;
    std::array<uint64_t, shm::kPayloadSlots> payloadWriter_{};
    std::string peerHost_;
    std::chrono::steady_clock::time_point lastLivenessCheck_{};
    uint32_t idleChecks_ = 0;
};

}  // namespace hostccl::transport
