// Waits for posted transfers. Progress is driven by the waiting thread itself (no
// helper thread): it advances every link with work, and when nothing moves it
// blocks in poll() on the links' sockets rather than spinning, so ranks that
// outnumber cores leave the CPU to the ranks that can run. Every wait is bounded
// by the op's deadline and wakes at least every 100 ms to notice an abort.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "common/comm_failure.h"
#include "common/deadline.h"
#include "common/error.h"
#include "transports/link.h"

namespace hostccl::transport {

// `crowded`: this machine runs more ranks than it has cores, so waiting must leave the
// CPU to others almost at once. A transfer's error or the deadline raises `failure`
// (so the rest of the communicator and its peers learn of it); a failure raised
// elsewhere (a dead peer, an abort) ends the wait with that failure's code and reason.
// `watch` (may be null) is what the wait tells live monitoring (monitor/); with
// it, bulk receives on network links are also timed (LinkCounters::timedBytes).
struct WaitWatch;
HcclResult waitAll(const std::vector<Transfer*>& transfers, Deadline deadline, CommFailure* failure, ErrorSite site,
                   bool crowded, WaitWatch* watch = nullptr);

// What a wait tells live monitoring. Nothing is measured while the data is there
// at once: the clock is read only once the wait has spun without result, so a wait
// that finds its data costs two branches.
struct WaitWatch {
    // In: whether to time how long this wait took past spinning (an op's first wait:
    // how long this rank waited for the others to arrive).
    bool timeArrival = false;
    // In (may be null): while the wait sleeps, the peer it waits for (-1 when awake),
    // and a count bumped by every pass that moves bytes (a stuck op's stays put).
    std::atomic<int64_t>* waitingOn = nullptr;
    std::atomic<uint64_t>* progress = nullptr;
    // Out, with timeArrival: nanoseconds from the end of spinning to the last
    // completion (0: the data came while spinning), and the peer of the receive that
    // completed last (-1: none was waited for).
    uint64_t waitedNs = 0;
    int64_t lastPeer = -1;
};

// The ends of every wait: a failure raised elsewhere (a dead peer, an abort) reported
// as this op's error, blaming its culprit; and this wait's own failure, raised for the
// communicator unless another came first, which is then reported (it is the cause).
HcclResult endedByFailure(const CommFailure& failure, ErrorSite site);
HcclResult failWith(CommFailure* failure, HcclResult code, ErrorSite site, std::string text);

// What drives the transfers when it is not the waiting thread polling its links:
// the simulator (sim/), whose links move on a virtual clock, suspends
// the waiting rank until its transfers complete there.
class Driver {
public:
    virtual ~Driver() = default;
    virtual HcclResult waitAll(const std::vector<Transfer*>& transfers) = 0;
    // Work of the rank's own that no transfer accounts for: a virtual clock moves on by it.
    enum class Work : uint8_t { Copy, Reduce };
    virtual void localWork(Work what, size_t bytes) = 0;
    // False when only sizes are simulated: buffers hold nothing worth copying.
    virtual bool movesData() const = 0;
};

}  // namespace hostccl::transport
