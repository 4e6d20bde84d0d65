// What a large op runs at, measured on a running communicator: the init probe times
// 256 KiB messages and kernels, which live in cache, while an op of tens of MiB per
// rank streams from memory at a fraction of that. hostccl-sim --probe adds these
// rates (BulkRates) so a simulated 64 MiB op is timed at memory speed.
#pragma once

#include <vector>

#include "hccl/hccl_types.h"
#include "transports/sim/platform.h"

namespace hostccl::sim {

// `comms`: every rank of the communicator (ranks as threads here) or this process's
// one rank (under a launcher; every rank must call). Rank 0 copies and reduces
// buffers of growing size alone (thread CPU time, so ranks sharing its cores do not
// count), and exchanges 64 KiB, 256 KiB and 64 MiB with rank 1 (shm) and with the
// first rank of host 1 (net) while the others wait. On rank 0 it sets `p->bulk`, and
// on a crowded host (more ranks than cores) the links' in-cache betas to one flow's
// alone: the init probe times every rank shifting at once, which there is the
// scheduler's pace, and the simulator models the cores' sharing itself. Other ranks
// only take part.
bool measureBulk(const std::vector<HcclComm>& comms, Platform* p, std::string* why);

}  // namespace hostccl::sim
