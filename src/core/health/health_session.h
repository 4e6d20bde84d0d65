// One communicator's health: channels to its ring neighbours in other processes
// (at most two, whatever the communicator's size) that carry heartbeats and
// goodbyes, and the failure notices every rank may send (notice_broadcast.h). It
// turns what it sees into the communicator's failure (common/comm_failure.h):
//   - a channel that closes without a goodbye: the neighbour died (HCCL_E_REMOTE);
//   - no heartbeat for HOSTCCL_HEARTBEAT_TIMEOUT: the neighbour is stopped or cut
//     off (HCCL_E_TIMEOUT);
//   - a failure notice or abort: its reason, naming the rank it blames.
// A failure first seen here is spread to every rank over a logarithmic broadcast,
// so every rank names the same cause, not just the neighbour it was waiting for.
// The health monitor (health_monitor.h) drives every session of the process from
// one thread; a session's state is only touched with the monitor's lock held.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "common/comm_failure.h"
#include "core/health/health_frame.h"
#include "core/health/notice_broadcast.h"
#include "core/net/handshake.h"
#include "common/net/socket.h"

namespace hostccl::health {

class HealthSession {
public:
    using Clock = std::chrono::steady_clock;
    // Failures are raised on `failure`, which must outlive the session.
    HealthSession(Membership membership, CommFailure* failure);
    ~HealthSession();
    HealthSession(const HealthSession&) = delete;
    HealthSession& operator=(const HealthSession&) = delete;

    // Before start(): the authenticated connection to `peer`; `who` names it in
    // messages ("rank 3 (host h, pid 42)").
    void addPeer(uint32_t peer, net::Fd fd, std::string who);
    // Joins the monitor (channels watched, notices delivered here).
    void start();
    size_t channelCount() const { return peers_.size(); }
    // Tells every rank of this rank's own failure (if `failure` is first seen here)
    // or of an abort.
    void announceFailure();
    void announceAbort();
    // The op this rank is in, carried by heartbeats so a timeout can say where the peer is.
    void setSeq(uint64_t seq) { seq_.store(seq, std::memory_order_relaxed); }
    // For timeout messages, when `peer` still answers heartbeats: when it was last
    // heard and at which op; "" when it is not known to be alive.
    std::string peerStatus(uint32_t peer) const;
    // Says goodbye to the neighbours and leaves the monitor; idempotent.
    void close();

    // The monitor's side (its lock held).
    uint64_t commId() const { return membership_->commId; }
    uint32_t rank() const { return rank_; }
    // A notice that reached this rank (a peer's connection, or a rank of this process).
    void takeNotice(const Frame& f);
    size_t peerCount() const { return peers_.size(); }
    int fdOf(size_t i) const { return peers_[i].fd.get(); }
    bool watching(size_t i) const { return peers_[i].state == State::Live; }
    void onReadable(size_t i, Clock::time_point now);
    void tick(Clock::time_point now);
    // Counts every live peer as heard now (after the monitor itself was not running).
    void forgiveSilence(Clock::time_point now);

private:
    enum class State { Live, Left, Lost };
    struct Peer {
        uint32_t rank = 0;
        net::Fd fd;
        std::string who;
        State state = State::Live;
        Clock::time_point lastHeard;
        Clock::time_point lastSent;
        uint64_t peerSeq = 0;
        std::string inbox;   // bytes of a frame not yet complete
        std::string outbox;  // bytes the socket did not take yet
    };

    void takeFrames(Peer& p);
    void handle(Peer& p, const Frame& f);
    void lose(Peer& p, HcclResult code, const std::string& why);
    void raiseHere(HcclResult code, int64_t culprit, const std::string& text);
    void spread(Frame notice);
    void onNoticeConnection(net::Fd fd, const net::Hello& hello);
    void sendToAll(const Frame& f);
    void send(Peer& p, const std::string& bytes);
    void flush(Peer& p);
    Frame frame(FrameType type) const;

    const std::shared_ptr<const Membership> membership_;
    const std::string comm_;
    const uint32_t rank_;
    const uint32_t size_;
    uint64_t noticeTicket_ = 0;
    std::shared_ptr<SpreadsInFlight> spreads_ = std::make_shared<SpreadsInFlight>();
    CommFailure* const failure_;
    std::vector<Peer> peers_;
    std::atomic<uint64_t> seq_{0};
    bool announced_ = false;
    bool started_ = false;
    bool closed_ = false;
};

}  // namespace hostccl::health
