// One communicator's health channels: a connection to every peer, beside the data
// links, that carries heartbeats and notices (health_frame.h). It turns what the
// channels show into the communicator's failure (common/comm_failure.h):
//   - a channel that closes without a goodbye: the peer died (HCCL_E_REMOTE);
//   - no heartbeat for HOSTCCL_HEARTBEAT_TIMEOUT: the peer is stopped or cut off
//     (HCCL_E_TIMEOUT);
//   - a peer's failure notice or abort: its reason, naming the rank it blames.
// A failure first seen here is announced to every peer, so every rank names the
// same cause, not just the neighbour it was waiting for. The health monitor
// (health_monitor.h) drives every session of the process from one thread; a
// session's state is only touched with the monitor's lock held.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "common/comm_failure.h"
#include "core/health/health_frame.h"
#include "core/net/socket.h"

namespace hostccl::health {

class HealthSession {
public:
    using Clock = std::chrono::steady_clock;
    // `rank` of `size` in communicator `comm`; failures are raised on `failure`,
    // which must outlive the session.
    HealthSession(std::string comm, uint32_t rank, uint32_t size, CommFailure* failure);
    ~HealthSession();
    HealthSession(const HealthSession&) = delete;
    HealthSession& operator=(const HealthSession&) = delete;

    // Before start(): the authenticated connection to `peer`; `who` names it in
    // messages ("rank 3 (host h, pid 42)").
    void addPeer(uint32_t peer, net::Fd fd, std::string who);
    void start();
    // Tells every peer of this rank's own failure (if `failure` is first seen here)
    // or of an abort.
    void announceFailure();
    void announceAbort();
    // The op this rank is in, carried by heartbeats so a timeout can say where the peer is.
    void setSeq(uint64_t seq) { seq_.store(seq, std::memory_order_relaxed); }
    // For timeout messages, when `peer` still answers heartbeats: when it was last
    // heard and at which op; "" when it is not known to be alive.
    std::string peerStatus(uint32_t peer) const;
    // Says goodbye to every peer and leaves the monitor; idempotent.
    void close();

    // The monitor's side (its lock held).
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
    void sendToAll(const Frame& f);
    void send(Peer& p, const std::string& bytes);
    void flush(Peer& p);
    Frame frame(FrameType type) const;

    const std::string comm_;
    const uint32_t rank_;
    const uint32_t size_;
    CommFailure* const failure_;
    std::vector<Peer> peers_;
    std::atomic<uint64_t> seq_{0};
    bool announced_ = false;
    bool started_ = false;
    bool closed_ = false;
};

}  // namespace hostccl::health
