// Spreading a failure notice (or an abort) to every rank of a communicator in
// O(log n) steps without a full mesh: a k-nomial tree (k = 8) over the ranks,
// counted from the rank whose notice it is. The node at distance x with span d
// forwards to x + j d/8^i (j = 1..7, i = 1, 2, ... while d/8^i >= 1; those below n),
// each with d/8^i as its span. A child in
// another process gets the notice over a one-shot authenticated connection
// (Purpose::Notice) and forwards it itself; a child in this process is handed it
// directly and its subtree is covered by the same thread. A child that cannot be
// reached (dead, stopped) is skipped and its subtree covered by the sender, so one
// dead rank never hides the notice from others.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/siphash.h"
#include "core/bootstrap/peer_info.h"
#include "core/health/health_frame.h"
#include "core/net/handshake.h"

namespace hostccl::health {

// Who a communicator's notices go to; shared with the threads that spread them,
// which may outlive the communicator by a connection attempt.
struct Membership {
    std::string comm;
    uint64_t commId = 0;
    Secret secret;
    uint32_t rank = 0;
    std::shared_ptr<const std::vector<PeerInfo>> peers;
    uint32_t size() const { return static_cast<uint32_t>(peers->size()); }
};

// The span of the tree's root: the least power of the radix >= n.
uint32_t rootSpan(uint32_t n);

// The notices a session has in flight, so that destroying the communicator (and the
// process exiting after it) does not cut a broadcast short.
class SpreadsInFlight {
public:
    void begin();
    void end();
    // Waits until none is in flight, at most `limit`.
    void drain(std::chrono::milliseconds limit);

private:
    std::mutex mutex_;
    std::condition_variable done_;
    int count_ = 0;
};

// Forwards `notice` (origin and span set) to this rank's subtree, on a thread of
// its own; returns at once.
void spreadNotice(std::shared_ptr<const Membership> m, Frame notice, std::shared_ptr<SpreadsInFlight> tracker);

// A notice connection's frame after its Hello (already read): read, its MAC checked
// and acknowledged (bounded); false with `why` when none arrives intact and proven.
bool readNotice(int fd, const Secret& secret, const net::Hello& hello, uint32_t ranks, Frame* out, std::string* why);

}  // namespace hostccl::health
