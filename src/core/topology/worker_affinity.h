// Where a rank's stream thread runs. With a core for every rank of the machine, two
// ranks' stream threads that the scheduler puts on one core take turns at every
// exchange: a whole run of 8-byte ops then costs 8-9 us each instead of 0.9 (2 ranks on
// 2 cores, 2 runs in 15). With more ranks than cores they must take turns, and they do
// it best on cores of their own: left to the scheduler, threads that wake each other
// migrate and pile up (4 ranks on 2 cores, 8-byte allreduce 3.3-13.5 us between runs,
// median 11; bound, 3.1-4.1, median 4). Nobody placed a process whose threads may run on
// every core, so hostccl spreads the ranks' stream threads over the cores itself, in
// rank order; a process a launcher bound (to one core, or to any subset) keeps its
// binding. Ranks of one host outnumbering its cores share them in blocks of neighbours
// (ranks 0-3 on core 0, 4-7 on core 1): trees and rings talk mostly to nearby ranks, and
// a message between two ranks of one core wakes nobody on the other (8 ranks on 2 cores,
// 8-byte broadcast 3.4 -> 2.75 us, reduce 3.4 -> 2.6, against round robin). Hosts
// emulated on one machine go round robin, each host's ranks spread over the cores as on
// a real host: in blocks, each host's ranks took turns on one core at every exchange
// inside it (2 namespace hosts x 2 ranks on 2 cores, 8-byte allgather 9.3 -> 11 us,
// allreduce 9.3 -> 10.9). Crowded either way, a large op is left to the scheduler (api::keepsToCore): bound, the ranks busy with it may share
// one core while the other idles (4 ranks over TCP, 2 per namespace host on 2 cores,
// 1-64 MiB reduce at half the busbw).
#pragma once

#include <cstdint>

namespace hostccl {

// A rank's place among the ranks of a communicator on this machine.
struct MachinePlace {
    uint32_t index = 0;    // counted from 0, in rank order
    uint32_t ranks = 1;    // the communicator's ranks on this machine
    bool oneHost = true;   // false: hosts emulated on it (network namespaces, HOSTCCL_HOST_ID)
};

// The CPU for the stream threads that run ops of the rank at `place`, or -1 to leave
// them be (HOSTCCL_BIND_WORKERS=0, a bound process). Reads the calling thread's affinity.
int workerCpuFor(const MachinePlace& place);

// The CPU for a communicator's rank on `device`, decided once per device by the first
// communicator created there that has at least two ranks on this machine (usually the
// world's): a sub-communicator numbers the machine's ranks differently (ranks 0 and 2
// of two pairs are both its first), and binding by it would stack ranks on one core.
// Later communicators of the device get the same CPU; -1 until one decides, and for good
// when the first that could decided against binding (HOSTCCL_BIND_WORKERS=0 decides nothing).
int claimWorkerCpu(int32_t device, const MachinePlace& place);

// Binds the calling thread to `cpu`; a thread already bound there by this call does
// nothing (the check is a thread-local compare), nor does a negative `cpu`.
void keepThisThreadOn(int cpu);
// Gives a thread keepThisThreadOn bound back the CPUs it had before; others are left as
// they are.
void releaseThisThread();

}  // namespace hostccl
