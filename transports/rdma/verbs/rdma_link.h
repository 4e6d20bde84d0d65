// A Link over one RC queue pair. Each side owns a ring of receive slots registered
// for remote writes; the sender copies a message (WireHeader, then payload) into its
// own registered staging slot and RDMA-WRITEs it WITH IMMEDIATE into the peer's slot
// of the same index, the immediate carrying the byte count. Every message starts at
// a slot boundary, so elements never straddle slots and a receive can reduce each
// slot as it arrives. The peer hands slots back with credits (a zero-byte write with
// immediate), so a sender never overwrites a slot that has not been consumed.
// A large send from aclrtMalloc memory goes zero-copy: its payload is written straight
// from the caller's buffer (registered once, through the device's registration cache)
// and the send completes when the NIC has completed its writes; anything else is
// copied into staging and completes as soon as it is posted.
// Completions come from one CQ with a completion channel, whose fd the progress
// engine polls when the link has nothing to do.
#pragma once

#include <atomic>
#include <deque>
#include <mutex>
#include <memory>
#include <vector>

#include "common/deadline.h"
#include "common/net/socket.h"
#include "transports/queued_link.h"
#include "transports/rdma/credit_window.h"
#include "transports/rdma/ring_shape.h"
#include "transports/rdma/verbs/verbs_device.h"

namespace hostccl::transport::rdma {

// What one side tells the other to connect: its QP and where its ring is.
// No implicit padding: the bytes sent are exactly the fields.
struct Endpoint {
    uint32_t qpn, psn;
    uint16_t lid;
    uint8_t mtu;  // ibv_mtu
    uint8_t pad;
    uint8_t gid[16];
    uint32_t pad2;
    uint64_t ringAddr;
    uint32_t ringRkey;
    uint32_t slots, slotBytes;
    uint32_t magic;  // kEndpointMagic when the sender's queue pair is ready, else 0
};
static_assert(sizeof(Endpoint) == 56, "wire layout");

class RdmaLink final : public QueuedLink {
public:
    // Builds the QP and rings and connects them with the peer's over `fd` (the pair's
    // authenticated TCP connection), which the link then keeps to notice a peer that
    // dies (RDMA says nothing to a side that only waits to receive). Null with `why` on
    // any failure, `fd` left to the caller; both sides learn it in the closing
    // exchange, so they fall back together.
    // Its rings are shaped for a communicator of `commSize` ranks (ring_shape.h).
    static std::unique_ptr<RdmaLink> connect(uint32_t peer, uint64_t commId, uint32_t commSize,
                                             std::shared_ptr<VerbsDevice> device, net::Fd& fd, Deadline deadline,
                                             std::string* why);
    ~RdmaLink() override;

    LinkClass linkClass() const override { return LinkClass::Rdma; }
    // The first arrived slot's header (progress() gathers what arrived).
    bool unclaimedHeader(WireHeader* h) const override;
    bool progress() override;
    int pollFd() const override;
    short pollEvents() const override;

private:
    RdmaLink(uint32_t peer, uint64_t commId, RingShape shape, std::shared_ptr<VerbsDevice> device);
    bool setUp(std::string* why);                      // CQ, QP, rings, receives
    bool connectTo(const Endpoint& remote, std::string* why);  // INIT -> RTR -> RTS
    Endpoint local() const;

    bool pollCompletions();
    bool progressSends();
    void beginSend(Transfer* t);
    bool pinSource(const Transfer* t);
    bool postSlot(Transfer* t, uint32_t slot);
    void finishPosting(Transfer* t);
    void completeAcknowledged();
    void releasePins();
    bool progressRecvs();
    bool returnCredits();
    bool postWrite(uint32_t slot, ibv_sge* sge, int sges, uint32_t bytes);
    bool postCredits(uint32_t n);
    bool postRecv(uint64_t id);
    int consumeSlot(Transfer* t);  // -1 failed, 0 nothing to consume, 1 advanced
    void armAndDrainEvents();
    bool peerClosed();  // the kept TCP connection reached end of file
    void onBroken() override;

    std::shared_ptr<VerbsDevice> device_;
    net::Fd sock_;      // the pair's TCP connection, kept as a liveness channel
    net::Fd waitFd_;    // epoll over the completion channel and sock_: what waiters poll
    ibv_comp_channel* channel_ = nullptr;
    ibv_cq* cq_ = nullptr;
    ibv_qp* qp_ = nullptr;
    uint32_t slots_, slotBytes_;
    char* sendRing_ = nullptr;
    char* recvRing_ = nullptr;
    ibv_mr* sendMr_ = nullptr;
    ibv_mr* recvMr_ = nullptr;
    uint64_t remoteRing_ = 0;
    uint32_t remoteRkey_ = 0;
    uint32_t psn_ = 0;

    SendCredits credits_;
    CreditReturns returns_;
    std::vector<bool> stagingBusy_;     // until the write's completion
    size_t sendOffset_ = 0;             // bytes of the front send's stream (header + payload) written
    WireHeader outHeader_{};
    // The send being posted: zero-copy from a pinned registration, or staged.
    bool zeroCopy_ = false;
    uint32_t zeroCopyLkey_ = 0;
    RegistrationPin zeroCopyPin_;
    const size_t zeroCopyMin_;          // HOSTCCL_RDMA_ZERO_COPY_BYTES; 0: never
    bool warnedRegistration_ = false;
    // Sends fully posted whose writes have not all completed, in posting order (a
    // staged send behind a zero-copy one waits too: sends complete in order).
    struct Unacked {
        Transfer* t;
        uint64_t lastWrite;  // complete once this many data writes have completed
        RegistrationPin pin;
    };
    std::deque<Unacked> unacked_;
    uint64_t writesDone_ = 0;           // data writes completed
    uint64_t zeroCopySends_ = 0, stagedSends_ = 0;
    struct Arrived {
        uint32_t slot, bytes, offset;
    };
    std::deque<Arrived> arrived_;       // filled slots, in arrival (= ring) order
    uint32_t nextRecvSlot_ = 0;
    std::mutex asyncMutex_;
    std::string asyncError_;            // set by the device's event thread
    std::atomic<bool> asyncFailed_{false};
    uint64_t dataWrites_ = 0;           // data writes posted (and HOSTCCL_RDMA_INJECT_QP_ERROR's clock)
    int64_t injectAfter_ = -1;
};

}  // namespace hostccl::transport::rdma
