// A communicator's links, opened when an algorithm first needs one (or all at
// creation with HOSTCCL_CONNECT_ALL=1). Whoever needs a link first dials: the
// connection is authenticated with the job secret, then the link factory picks the
// transport for the pair. Incoming connections are set up by the process listener's
// handler threads (net::Acceptor::serve), never by this rank's op thread, so a link
// never waits for what the peer's op is doing. When both ranks dial at once the
// higher rank's connection wins on both sides; the loser waits for it (its own
// dial given up within a second if the peer never answers it).
// Two ranks of one process that would use shared memory are paired directly: one
// anonymous segment, no socket, no descriptor.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "algorithms/context.h"
#include "common/comm_failure.h"
#include "common/error.h"
#include "common/siphash.h"
#include "core/bootstrap/peer_info.h"
#include "core/net/handshake.h"
#include "common/net/socket.h"
#include "transports/link.h"

namespace hostccl {

class LinkTable final : public PeerLinks {
public:
    struct Identity {
        uint64_t commId = 0;
        Secret secret;
        uint32_t rank = 0;
        std::string comm;  // the communicator's name, for messages
    };
    // `peers` (everyone's bootstrap entry), `nameOf` (how errors name a peer) and
    // `failure` (which ends a wait for a connection at once) must outlive the table.
    LinkTable(Identity identity, const std::vector<PeerInfo>& peers, std::function<std::string(uint32_t)> nameOf,
              const CommFailure* failure);
    ~LinkTable() override;
    LinkTable(const LinkTable&) = delete;
    LinkTable& operator=(const LinkTable&) = delete;

    // Starts taking incoming connections and in-process pairings.
    void open();
    // Every peer at once (HOSTCCL_CONNECT_ALL=1).
    HcclResult connectAll(Deadline deadline);

    transport::Link* get(uint32_t peer, Deadline deadline, HcclResult* code, std::string* why) override;
    transport::Link* existing(uint32_t peer) const override;
    bool unclaimedBefore(uint64_t seq, uint32_t* peer, transport::WireHeader* h) const override;
    // At most kConnectAheadWindow setups in flight, each on a thread of its own; once
    // every link exists it costs one lock-free look per peer and allocates nothing.
    void connectAheadToAll(Deadline deadline) override;
    // Calls `fn` on every link built so far (the table's lock held: fn must not block).
    void forEach(const std::function<void(transport::Link&)>& fn) const;
    // Whether this pair is set up without sockets (same process, shared memory).
    bool inProcessPair(uint32_t peer) const;
    // Wakes a thread waiting for a connection (to see the communicator's failure).
    void wake() { changed_.notify_all(); }

private:
    enum class State : uint8_t { Idle, Dialing, Waiting, Accepting, Ready };
    enum Verdict : char { kAccept = 'Y', kLose = 'L', kDuplicate = 'D' };

    HcclResult dial(uint32_t peer, Deadline deadline, std::string* why);
    HcclResult pairInProcess(uint32_t peer, Deadline deadline, std::string* why);
    void onIncoming(net::Fd fd, const net::Hello& hello);
    Verdict decide(uint32_t peer);
    void install(uint32_t peer, std::unique_ptr<transport::Link> link);  // lock held
    void refuse(uint32_t peer, HcclResult rc, const std::string& why);    // lock held
    ErrorSite site(uint32_t peer) const;
    uint32_t commSize() const { return static_cast<uint32_t>(peers_.size()); }

    const Identity identity_;
    const std::vector<PeerInfo>& peers_;
    const std::function<std::string(uint32_t)> nameOf_;
    const CommFailure* const failure_;
    mutable std::mutex mutex_;
    std::condition_variable changed_;
    std::vector<std::unique_ptr<transport::Link>> links_;  // [peer]; null until connected
    // The same pointers for the op thread's lookup on every message, without the lock:
    // a link, once installed, stays until the table goes.
    std::unique_ptr<std::atomic<transport::Link*>[]> ready_;
    std::vector<State> state_;
    // [peer]: set when the peer's own connection was accepted while this rank was
    // dialing it. The peer refuses our dial, or (having finished and destroyed its
    // communicator) never answers it: the dial stops within a second (net::CancelScope).
    std::unique_ptr<std::atomic<bool>[]> dialMoot_;
    std::vector<std::string> lastError_;  // why an incoming setup for the peer failed
    // [peer]: a setup failed for good (finalFailure in link_table.cc): every later get()
    // for the peer returns this code (and lastError_) instead of dialing again.
    std::vector<HcclResult> refused_;
    uint64_t ticket_ = 0;  // the listener's service for our incoming links
    bool registered_ = false;
};

}  // namespace hostccl
