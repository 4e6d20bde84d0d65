// What a host running more ranks than it has cores costs beyond sharing them,
// measured with thread ranks or a launcher's processes (planner/probe_ranks.h):
// - a collective between phases of compute costs more than the op itself: the
//   scheduler shares the cores, so the ranks reach it at different times, and each
//   one that waits must be woken again. How far apart they arrive grows with the
//   compute since the last collective (4 ranks on 2 cores, 64 KiB allreduces after
//   1.3 / 2.5 / 5 / 10 / 15 ms of sgemm on one core added 0.21 / 0.35 / 0.62 / 1.6 /
//   1.8 ms each), so it is measured after no compute, a short and a long interval
//   and taken as a line (a fixed part plus a part per second of compute) whose fixed
//   part grows in from the cost after no compute; each reading is a round's wall time
//   beyond the CPU time its compute took, spread over the cores;
// - a pipeline's stages hand micro-batches to each other, and on such a host a rank
//   handed its input often waits for a core the scheduler gives it late (a core
//   idled 3.5-7.6 ms beside a queue of two ranks, until the next tick balanced
//   them). Measured: every rank a stage, as many micro-batches as ranks, against
//   the pipeline the planner predicts with each stage's rank on a core of its own
//   and the host's compute over its cores; what it adds per hand-off of the
//   pipeline's filling and draining.
#pragma once

#include <cstdint>
#include <string>

#include "planner/host_sharing.h"
#include "planner/probe_ranks.h"

namespace hostccl::plan {

// On this host with `threadRanks` ranks as threads using `cores` cores, or with 0
// under a launcher: the job's processes, each host's ranks probing among themselves,
// every host at once, on `cores` cores a host (every process must call it; each gets
// the same figures, the slowest host's); false and `why` when a communicator or an op fails.
bool measureHostSharing(uint32_t threadRanks, double cores, HostSharing* out, std::string* why);

}  // namespace hostccl::plan
