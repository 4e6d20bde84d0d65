// On a host running more ranks than it has cores, a collective between phases of
// compute costs more than the op itself: the scheduler shares the cores, so the
// ranks reach it at different times, and each one that waits must be woken again.
// Measured here: `ranks` thread ranks alternate about a millisecond of sgemm with
// a 64 KiB allreduce; the cost of one sync is the time this adds per round over
// the same compute alone (all ranks running, no collective), best of three.
#pragma once

#include <cstdint>
#include <string>

namespace hostccl::plan {

constexpr uint64_t kSyncProbeBytes = 64 << 10;

struct HostSharing {
    double computeSlowdown = 1;  // >= 1: compute time of ranks sharing the host over alone
    double perSync = 0;          // seconds one allreduce of kSyncProbeBytes adds between compute phases
};

// On this host with `ranks` ranks as threads using `cores` cores; false and `why`
// when the communicator or an op fails.
bool measureHostSharing(uint32_t ranks, double cores, HostSharing* out, std::string* why);

}  // namespace hostccl::plan
