// Where a rank's stream thread runs. With a core for every rank of the machine, two
// ranks' stream threads that the scheduler puts on one core take turns at every
// exchange: a whole run of 8-byte ops then costs 8-9 us each instead of 0.9 (2 ranks on
// 2 cores, 2 runs in 15). Nobody placed a process whose threads may run on every core,
// so hostccl spreads the ranks' stream threads over the cores itself; a process a
// launcher bound (to one core, or to any subset) keeps its binding, and a machine with
// more ranks than cores keeps the scheduler's freedom (ranks must take turns there).
#pragma once

#include <cstdint>

namespace hostccl {

// The CPU for the stream threads that run ops of the rank `machineIndex`-th among the
// `ranksOnMachine` ranks of this machine, or -1 to leave them be (HOSTCCL_BIND_WORKERS=0,
// a bound process, a crowded machine). Reads the calling thread's affinity.
int workerCpuFor(uint32_t machineIndex, uint32_t ranksOnMachine);

// The CPU for a communicator's rank on `device`, decided once per device by the first
// communicator created there that has at least two ranks on this machine (usually the
// world's): a sub-communicator numbers the machine's ranks differently (ranks 0 and 2
// of two pairs are both its first), and binding by it would stack ranks on one core.
// Later communicators of the device get the same CPU; -1 until one decides, and for good
// when the first that could decided against binding (HOSTCCL_BIND_WORKERS=0 decides nothing).
int claimWorkerCpu(int32_t device, uint32_t machineIndex, uint32_t ranksOnMachine);

// Binds the calling thread to `cpu`; a thread already bound there by this call does
// nothing (the check is a thread-local compare).
void keepThisThreadOn(int cpu);

}  // namespace hostccl
