// A stream is an in-order queue of host tasks served by one worker thread.
// Enqueue returns at once; synchronize waits for everything enqueued before it
// and returns (and clears) the first error a task reported.
//
// Queued work lives in place in a ring of slots: the queuing thread builds it in the
// next free slot and publishes it with one store; the thread running the stream runs
// it there and frees the slot with another. Nothing is allocated per task, and the
// running thread takes no lock the queuing thread takes (they trade two cache lines,
// the slot and the ring's two counters, instead of a lock and a record). A slot keeps
// its object between uses, so work whose object owns memory (an HCCL op's count
// arrays) is freed by the thread that queued it when that thread next builds there.
// Past the ring's capacity work spills into a list (allocated, its entries reused;
// order kept), so a thread queuing on several streams never blocks on one.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <new>
#include <thread>
#include <vector>

#include "acl/acl_base.h"
#include "common/deadline.h"

namespace hostccl::runtime {

// A task returns 0 or an error code: an HcclResult for HCCL operators (small
// values) or an aclError (>= 100000) for runtime calls; the two never overlap.
using Task = std::function<int()>;

// How one kind of queued work lives in a slot (see Stream::enqueueInPlace), one per
// (type, run function).
struct WorkKind {
    void (*create)(void* at);   // default-constructs the object: once per slot and kind
    void (*destroy)(void* at);  // when the slot goes to another kind, or the stream ends
    int (*run)(void* at);       // runs the work, then drops what must not outlive it
};

// The kind for objects of type T run by `Run` (which must also release what T holds
// that others wait to see released).
template <class T, int (*Run)(T&)>
const WorkKind& workKindOf() {
    static const WorkKind kind{[](void* at) { new (at) T(); }, [](void* at) { static_cast<T*>(at)->~T(); },
                               [](void* at) { return Run(*static_cast<T*>(at)); }};
    return kind;
}

class Stream {
public:
    static constexpr size_t kWorkBytes = 240;  // a slot is 256 bytes
    explicit Stream(int32_t device);
    ~Stream();  // runs what is queued, then joins the worker
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;

    // Queues work of type T, run by `Run`, and returns its ticket: how many tasks this
    // stream had been given with it. `fill` receives the slot's object (a T as the last
    // work of this kind there left it) and must not throw.
    template <class T, int (*Run)(T&), class Fill>
    uint64_t enqueueInPlace(Fill&& fill) {
        static_assert(sizeof(T) <= kWorkBytes && alignof(T) <= 16, "queued work too large for a slot");
        void* at = claim(workKindOf<T, Run>());
        fill(*static_cast<T*>(at));
        return publish();
    }
    uint64_t enqueue(Task task);
    // Runs the queued tasks up to `ticket` on the calling thread, when no thread is
    // running this stream's tasks: a caller about to block until that task is done
    // runs it instead of waking the worker and then being woken by it (two thread
    // hand-offs, which dominate a small op when ranks outnumber cores). Order is kept:
    // the worker takes nothing meanwhile. False when it ran nothing (the worker has
    // them, or they are done).
    bool runHere(uint64_t ticket);
    // How many queued tasks runHere may take at once (0: it runs none). Each HCCL op queued
    // sets it (api::callerRunLimit): a few when the op is small, so that a caller waiting for
    // the op it has just queued runs it, while a long queue the worker has not reached yet
    // stays with the worker, which keeps to the rank's core (a caller's thread is never
    // bound: running a stream of ops on a core another rank's worker keeps to, the two take
    // turns at every exchange). Where ranks outnumber cores: none for a small op, whose
    // worker keeps to the rank's core, and any number for the rest (nobody bound).
    static constexpr uint32_t kAnyNumber = UINT32_MAX;
    void letCallersRun(uint32_t tasks) {  // written only when it changes: the worker's lines are near
        if (callersRunUpTo_.load(std::memory_order_relaxed) != tasks)
            callersRunUpTo_.store(tasks, std::memory_order_relaxed);
    }
    // 0, the first task error since the last synchronize, or
    // ACL_ERROR_RT_STREAM_SYNC_TIMEOUT when the deadline passed first.
    int synchronize(Deadline deadline);
    int32_t device() const { return device_; }
    // Being destroyed: a task that waits for something outside the stream gives up.
    bool stopping() const { return stopping_.load(std::memory_order_acquire); }
    // For a task: the result of the task that ran just before it on this stream (the
    // C++ API's completion markers read their op's result this way).
    int lastResult() const { return lastResult_; }
    // Whether the calling thread is a stream's worker (not a caller running tasks here).
    static bool onWorkerThread();

private:
    static constexpr size_t kSlots = 512;  // 128 KiB, written once up front
    static constexpr size_t kSpillKept = 4096;  // spill entries kept for reuse (about 1 MiB)
    struct alignas(64) Slot {
        const WorkKind* kind = nullptr;  // of the object in `work` (null: none yet)
        alignas(16) unsigned char work[kWorkBytes];
    };
    struct Spilled;

    void* claim(const WorkKind& kind);  // locks enqueueMutex_
    uint64_t publish();                 // unlocks it
    void run();
    bool runOne();      // the oldest queued work; false when there is none
    bool runSpilled();  // the spilled list, once the ring has run dry
    bool hasWork() const;
    bool takeBaton();   // the right to run this stream's work (worker or a caller)
    void dropBaton();
    void wakeWorker();
    void finished(int rc);

    const int32_t device_;
    Slot* ring_;  // kSlots, mapped for this stream (see the constructor)
    // The queuing threads' side: tail_ and spill_ under enqueueMutex_ (queuing threads
    // only, so uncontended with a single producer).
    alignas(64) std::mutex enqueueMutex_;
    uint64_t tail_ = 0;
    uint64_t headSeen_ = 0;  // head_ when last read: read again only when the ring looks full
    std::deque<std::unique_ptr<Spilled>> spill_;
    std::vector<std::unique_ptr<Spilled>> spillFree_;  // run, kept for reuse (at most kSpillKept)
    std::atomic<uint64_t> enqueued_{0};    // tickets given
    std::atomic<uint64_t> published_{0};   // ring slots published (tail_ as seen by the runner)
    std::atomic<bool> spilled_{false};     // spill_ is not empty
    std::atomic<uint32_t> callersRunUpTo_{0};
    // The running thread's side.
    alignas(64) std::atomic<uint64_t> head_{0};  // ring slots run (free for reuse)
    uint64_t publishedSeen_ = 0;  // published_ when last read: read again only when the ring looks empty
    std::atomic<bool> consuming_{false};          // the baton
    std::atomic<uint64_t> completed_{0};          // tasks run (written by the baton holder)
    int lastResult_ = 0;                          // written and read by the baton holder
    // Sleeping and waking (rare paths).
    alignas(64) std::mutex sleepMutex_;
    std::condition_variable workReady_;
    std::atomic<bool> sleeping_{false};
    std::atomic<bool> stopping_{false};
    std::mutex doneMutex_;  // firstError_ and synchronize's wait
    std::condition_variable workDone_;
    int firstError_ = 0;
    // A synchronize that needs a count sets wakeAt_; the runner takes doneMutex_ to wake
    // it only when the count reaches it.
    std::atomic<uint64_t> wakeAt_{UINT64_MAX};
    std::thread worker_;
};

// Resolves a handle: nullptr is the process's default stream; a handle that is not
// a live stream returns nullptr. The caller shares ownership, so a concurrent
// aclrtDestroyStream cannot free the stream under it.
std::shared_ptr<Stream> resolveStream(aclrtStream handle);
aclrtStream createStream();
bool destroyStream(aclrtStream handle);
void synchronizeAllStreams();

}  // namespace hostccl::runtime
