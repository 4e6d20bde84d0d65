#include "api/op_queue.h"

#include <mutex>
#include <vector>

#include "common/datatype.h"
#include "core/topology/worker_affinity.h"

namespace hostccl::api {

namespace {
// Ops waiting on a stream, recycled. A fresh heap object per op would be allocated
// on the caller's thread and freed on the stream's, and glibc then serialises the
// two threads on its arena lock: measured, that was most of an 8-byte op's time.
struct PendingOp {
    Comm* comm = nullptr;
    CollArgs args;
    bool fromSlab = false;  // part of the pool's first block: never deleted alone
};

class PendingOps {
public:
    // The first records come in one block, written once here: a page touched for the
    // first time costs a fault (14 us on the 2-core Debian 12 test VM), and a burst of
    // queued ops that grew the pool record by record took dozens of them inside the
    // timed loop (2 ranks, 500 queued 8-byte broadcasts: 1.29 us per op against 0.58
    // once the pool was warm).
    PendingOps() {
        slab_ = new PendingOp[kKept];
        free_.reserve(kKept);
        for (size_t i = 0; i < kKept; ++i) {
            slab_[i].fromSlab = true;
            free_.push_back(&slab_[i]);
        }
    }
    // Moves `n` ops into `into` (new ones when the pool runs short).
    void take(std::vector<PendingOp*>* into, size_t n) {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            for (; n > 0 && !free_.empty(); --n) {
                into->push_back(free_.back());
                free_.pop_back();
            }
        }
        for (; n > 0; --n) into->push_back(new PendingOp);
    }
    // Moves the last `n` ops of `from` back (deleting what the pool does not keep).
    void give(std::vector<PendingOp*>* from, size_t n) {
        std::lock_guard<std::mutex> lock(mutex_);
        for (; n > 0; --n) {
            if (free_.size() < kKept || from->back()->fromSlab) free_.push_back(from->back());
            else delete from->back();
            from->pop_back();
        }
    }

private:
    static constexpr size_t kKept = 1024;
    std::mutex mutex_;
    std::vector<PendingOp*> free_;
    PendingOp* slab_;  // never freed: streams may still run ops during exit
};

PendingOps& pendingOps() {
    static PendingOps* ops = new PendingOps;  // streams may still run ops during exit
    return *ops;
}

// Each thread keeps a few ops of its own and trades with the shared pool in batches:
// the caller takes and the stream's thread gives back on every op, and one shared
// lock between them cost a contended lock round per op each.
class LocalOps {
public:
    ~LocalOps() { pendingOps().give(&ops_, ops_.size()); }
    PendingOp* take() {
        if (ops_.empty()) pendingOps().take(&ops_, kBatch);
        PendingOp* op = ops_.back();
        ops_.pop_back();
        return op;
    }
    void give(PendingOp* op) {
        ops_.push_back(op);
        if (ops_.size() >= 2 * kBatch) pendingOps().give(&ops_, kBatch);
    }

private:
    static constexpr size_t kBatch = 16;
    std::vector<PendingOp*> ops_;
};

LocalOps& localOps() {
    thread_local LocalOps ops;
    return ops;
}
}  // namespace

uint32_t callerRunLimit(bool machineCrowded, uint64_t opBytes) {
    // The hand-offs against the op's time: torch's 8-byte all_reduce waited for, 2
    // processes on 2 cores, 21-23 us to 18. Larger ops, and queues longer than an op's
    // few tasks, stay with the stream's worker, which keeps to the rank's core
    // (core/topology/worker_affinity.h): a caller's thread is never bound, and one running
    // a long queue on the core another rank's worker keeps to made the two take turns at
    // every exchange (allreduce_perf 8 B, 2 ranks: 7-8 us per op instead of 1.5).
    constexpr uint64_t kSmallOpBytes = 256 << 10;
    // The op and what is queued around it: the C++ API's start and end markers, an
    // event, the few ops of a coalesced batch.
    constexpr uint32_t kFewTasks = 8;
    if (machineCrowded) return runtime::Stream::kAnyNumber;
    return opBytes <= kSmallOpBytes ? kFewTasks : 0;
}

HcclResult enqueue(Comm* c, runtime::Stream& stream, CollArgs args) {
    c->opEnqueued();
    PendingOp* op = localOps().take();
    op->comm = c;
    op->args = std::move(args);
    op->args.flightId = c->noteQueued(op->args);
    stream.letCallersRun(callerRunLimit(c->machineCrowded(), opBytes(op->args, dtypeSize(op->args.dtype))));
    // Capturing one pointer keeps the task inside std::function: no allocation.
    stream.enqueue([op] {
        Comm* comm = op->comm;
        if (runtime::Stream::onWorkerThread()) keepThisThreadOn(comm->workerCpu());  // never a caller's thread
        HcclResult rc = comm->execute(op->args);
        localOps().give(op);
        comm->opFinished();
        return static_cast<int>(rc);
    });
    return HCCL_SUCCESS;
}

}  // namespace hostccl::api
