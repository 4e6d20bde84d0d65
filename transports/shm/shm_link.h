// A Link between two ranks on one host, over a pair of shared-memory rings. The
// authenticated TCP connection that set it up is kept as a liveness channel: when
// the peer process dies its end closes, and pending transfers fail instead of
// waiting for the op deadline.
#pragma once

#include <chrono>
#include <deque>

#include "core/net/socket.h"
#include "transports/queued_link.h"
#include "transports/shm/peer_memory.h"
#include "transports/shm/shm_segment.h"

namespace hostccl::transport {

class ShmLink final : public QueuedLink {
public:
    // `outbound` indexes the segment's ring this side writes; `peerPid` tells
    // whether the peer shares this address space (single copy by pointer).
    ShmLink(uint32_t peer, uint64_t commId, shm::Mapping mapping, int outbound, net::Fd control, std::string peerHost,
            uint32_t peerPid);
    const char* kind() const override { return "shm"; }
    bool progress() override;
    int pollFd() const override { return -1; }  // data arrives in memory, not on a socket
    short pollEvents() const override { return 0; }
    uint32_t activityStamp() const override { return myBell_->rings.load(std::memory_order_acquire); }
    bool waitForActivity(uint32_t stamp, int timeoutUs) override;
    bool sharesMemory() const override { return true; }
    char* mapPeerRegion(const SharedRegion& r, std::string* why) override;

private:
    bool progressSends();
    bool progressRecvs();
    bool writeFragments(Transfer* t);  // true if any fragment was written
    bool writeDescriptor(Transfer* t);  // single copy: false when the data cannot be shared
    int readFragments(Transfer* t);    // -1 failed, 0 nothing, 1 advanced
    int readDirect(Transfer* t, const shm::SlotHeader* h, const unsigned char* payload);
    void checkPeerAlive();
    void ringPeer();  // after any change the peer may be waiting for
    void onBroken() override;

    shm::Mapping mapping_;
    shm::Ring* out_;
    shm::Ring* in_;
    shm::Bell* myBell_;
    shm::Bell* peerBell_;
    net::Fd control_;
    bool peerInProcess_;
    shm::PeerMemory peerMemory_;
    uint64_t directSent_ = 0;
    std::string peerHost_;
    std::chrono::steady_clock::time_point lastLivenessCheck_{};
    uint32_t idleChecks_ = 0;
};

}  // namespace hostccl::transport
