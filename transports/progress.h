// Waits for posted transfers. Progress is driven by the waiting thread itself (no
// helper thread): it advances every link with work, and when nothing moves it
// blocks in poll() on the links' sockets rather than spinning, so ranks that
// outnumber cores leave the CPU to the ranks that can run. Every wait is bounded
// by the op's deadline and wakes at least every 100 ms to notice an abort.
#pragma once

#include <atomic>
#include <vector>

#include "common/deadline.h"
#include "common/error.h"
#include "transports/link.h"

namespace hostccl::transport {

// `crowded`: this host runs more ranks than it has cores, so waiting must leave the
// CPU to others almost at once.
HcclResult waitAll(const std::vector<Transfer*>& transfers, Deadline deadline, const std::atomic<bool>* aborted,
                   ErrorSite site, bool crowded);

}  // namespace hostccl::transport
