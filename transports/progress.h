// Waits for posted transfers. Progress is driven by the waiting thread itself (no
// helper thread): it advances every link with work, and when nothing moves it
// blocks in poll() on the links' sockets rather than spinning, so ranks that
// outnumber cores leave the CPU to the ranks that can run. Every wait is bounded
// by the op's deadline and wakes at least every 100 ms to notice an abort.
#pragma once

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
HcclResult waitAll(const std::vector<Transfer*>& transfers, Deadline deadline, CommFailure* failure, ErrorSite site,
                   bool crowded);

// The ends of every wait: a failure raised elsewhere (a dead peer, an abort) reported
// as this op's error, blaming its culprit; and this wait's own failure, raised for the
// communicator unless another came first, which is then reported (it is the cause).
HcclResult endedByFailure(const CommFailure& failure, ErrorSite site);
HcclResult failWith(CommFailure* failure, HcclResult code, ErrorSite site, std::string text);

// What drives the transfers when it is not the waiting thread polling its links:
// the simulator (transports/sim/), whose links move on a virtual clock, suspends
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
