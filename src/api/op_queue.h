// Collectives queued on a stream (built in place in its ring) and how many of a
// stream's tasks a waiting caller may run itself.
#pragma once

#include <cstdint>

#include "algorithms/coll_args.h"
#include "core/comm.h"
#include "runtime/stream.h"

namespace hostccl::api {

// Queues `args` on `stream`; the op runs on the stream's thread, or on a thread that
// blocks for it (callerRunLimit).
HcclResult enqueue(Comm* c, runtime::Stream& stream, CollArgs args);
// Whether an op of `opBytes` runs with the stream thread kept to the rank's core
// (core/topology/worker_affinity.h): always where every rank has a core; where ranks
// outnumber cores only a small one, a large one going where the scheduler finds room.
bool keepsToCore(bool machineCrowded, uint64_t opBytes);
// How many of a stream's queued tasks a thread about to block for them may run itself
// (runtime::Stream::letCallersRun), set by each op of `opBytes` queued. On a machine with
// more ranks than cores: none when the op keeps the rank's stream thread to a core
// (`workerBound`, keepsToCore), any number otherwise. Else a few for a small op, whose time
// is mostly the two thread hand-offs a waited-for op costs, and none for a large one.
uint32_t callerRunLimit(bool machineCrowded, bool workerBound, uint64_t opBytes);

}  // namespace hostccl::api
