#include "api/op_queue.h"

#include "common/datatype.h"
#include "core/topology/worker_affinity.h"

namespace hostccl::api {

namespace {
// An op queued on a stream: built in place in the stream's ring by the caller, run
// there by the thread that runs the stream. The slot keeps it between ops, so the
// count arrays the next op's arguments replace are freed by the caller's thread that
// allocated them: memory freed on another thread than the one that took it makes
// glibc serialise the two on its arena lock, which measured as most of an 8-byte op's
// time when ops were heap records.
struct QueuedOp {
    Comm* comm = nullptr;
    CollArgs args;
    bool keepsToCore = true;
};

int runQueuedOp(QueuedOp& op) {
    Comm* comm = op.comm;
    if (runtime::Stream::onWorkerThread()) {  // never a caller's thread
        if (op.keepsToCore) keepThisThreadOn(comm->workerCpu());
        else releaseThisThread();
    }
    const HcclResult rc = comm->execute(op.args);
    comm->opFinished();
    return static_cast<int>(rc);
}

// The hand-offs against the op's time: torch's 8-byte all_reduce waited for, 2 processes
// on 2 cores, 21-23 us to 18. Larger ops, and queues longer than an op's few tasks, stay
// with the stream's worker, which keeps to the rank's core
// (core/topology/worker_affinity.h): a caller's thread is never bound, and one running a
// long queue on the core another rank's worker keeps to made the two take turns at every
// exchange (allreduce_perf 8 B, 2 ranks: 7-8 us per op instead of 1.5).
constexpr uint64_t kSmallOpBytes = 256 << 10;
// The op and what is queued around it: the C++ API's start and end markers, an event,
// the few ops of a coalesced batch.
constexpr uint32_t kFewTasks = 8;
}  // namespace

bool keepsToCore(bool machineCrowded, uint64_t opBytes) { return !machineCrowded || opBytes <= kSmallOpBytes; }

uint32_t callerRunLimit(bool machineCrowded, bool workerBound, uint64_t opBytes) {
    // Where ranks outnumber cores a caller running even one small op off its rank's core
    // lands among the ranks that keep to that core (4 ranks on 2 cores, each 8-byte
    // allreduce waited for: 10-42 us, against 10.6-12 run by the bound worker); an op
    // nobody binds the caller runs, saving the hand-offs.
    if (machineCrowded)
        return workerBound && keepsToCore(machineCrowded, opBytes) ? 0 : runtime::Stream::kAnyNumber;
    return opBytes <= kSmallOpBytes ? kFewTasks : 0;
}

HcclResult enqueue(Comm* c, runtime::Stream& stream, CollArgs args) {
    c->opEnqueued();
    const uint64_t bytes = opBytes(args, dtypeSize(args.dtype));
    stream.letCallersRun(callerRunLimit(c->machineCrowded(), c->workerCpu() >= 0, bytes));
    stream.enqueueInPlace<QueuedOp, runQueuedOp>([&](QueuedOp& op) {
        op.comm = c;
        op.keepsToCore = keepsToCore(c->machineCrowded(), bytes);
        op.args = std::move(args);
        op.args.flightId = c->noteQueued(op.args);
    });
    return HCCL_SUCCESS;
}

}  // namespace hostccl::api
