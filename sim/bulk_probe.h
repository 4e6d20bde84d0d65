// What a large op runs at, measured on a running communicator: the init probe times
// 256 KiB messages and kernels, which live in cache, while an op of tens of MiB per
// rank streams from memory at a fraction of that. hostccl-sim --probe adds these
// rates (BulkRates) so a simulated 64 MiB op is timed at memory speed.
#pragma once

#include <vector>

#include "hccl/hccl_types.h"
#include "sim/platform.h"

namespace hostccl::sim {

// `comms`: every rank of the communicator (ranks as threads here) or this process's
// one rank (under a launcher; every rank must call). Rank 0 copies and reduces
// buffers of growing size alone (thread CPU time, so ranks sharing its cores do not
// count), and sends 64 KiB and 256 KiB to rank 1 (shm), 256 KiB (16 in a row) to
// the first rank of host 1 (net) and 64 MiB (four in a row) to both while the others
// wait; over TCP it also exchanges the same sizes with that rank (both sending at
// once), which with the CPU time both ends spend on the one-way flows sets the net's
// cpu share in cache and in bulk (cpuShareOf in the .cc). With two ranks on each of
// hosts 0 and 1, two of those streams at once measure what a host sends in all: where
// it is less than 1.5 flows' worth, it becomes the NIC rate (unless one was given).
// On rank 0 it sets `p->bulk`, the net's in-cache beta to that streak's alone, and
// the shm's where the init probe did not measure it (`shmProbed` false) or the host
// is crowded (never faster than the copy kernel): the simulator charges each flow its
// own rate and models what flows share (cores, NICs, uplinks) itself, while the init
// probe times every rank shifting at once (on a crowded host the scheduler's pace;
// across a shaper, both ways through its queues). Host 0's ranks also run 8-byte ring
// allreduces among themselves, and the shm alphas become at least a step of those:
// a step of a real op waits for its peer to be scheduled, which the init probe's
// shift between idle links does not see; with several hosts every rank then runs
// them in one flat ring, whose step becomes the least time of any message, shared
// memory's or the net's (LinkModel::step). Other ranks only take part.
bool measureBulk(const std::vector<HcclComm>& comms, Platform* p, bool shmProbed, std::string* why);

}  // namespace hostccl::sim
