// A stream is an in-order queue of host tasks served by one worker thread.
// Enqueue returns at once; synchronize waits for everything enqueued before it
// and returns (and clears) the first error a task reported.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "acl/acl_base.h"
#include "common/deadline.h"

namespace hostccl::runtime {

// A task returns 0 or an error code: an HcclResult for HCCL operators (small
// values) or an aclError (>= 100000) for runtime calls; the two never overlap.
using Task = std::function<int()>;

class Stream {
public:
    explicit Stream(int32_t device);
    ~Stream();  // runs what is queued, then joins the worker
    Stream(const Stream&) = delete;
    Stream& operator=(const Stream&) = delete;

    // Returns the task's ticket: how many tasks this stream had been given with it.
    uint64_t enqueue(Task task);
    // Runs the queued tasks up to `ticket` on the calling thread, when no thread is
    // running this stream's tasks: a caller about to block until that task is done
    // runs it instead of waking the worker and then being woken by it (two thread
    // hand-offs, which dominate a small op when ranks outnumber cores). Order is kept:
    // the worker takes nothing meanwhile. False when it ran nothing (the worker has
    // them, or they are done).
    bool runHere(uint64_t ticket);
    // How many queued tasks runHere may take at once (0: it runs none). Each HCCL op queued
    // sets it (api::callerRunLimit): any number on a machine with more ranks than cores;
    // otherwise a few when the op is small, so that a caller waiting for the op it has just
    // queued runs it, while a long queue the worker has not reached yet stays with the worker,
    // which keeps to the rank's core (a caller's thread is never bound: running a stream of
    // ops on a core another rank's worker keeps to, the two take turns at every exchange).
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
    void run();
    // false: stopping and drained. `ranLast`: the worker ran the previous batch.
    bool takeBatch(std::vector<Task>* batch, bool ranLast);
    void runTasks(std::vector<Task>& tasks);
    void finished(int rc);

    const int32_t device_;
    std::mutex mutex_;
    std::condition_variable workReady_;
    std::condition_variable workDone_;
    std::vector<Task> queue_;  // swapped with the worker's batch: capacity is reused
    uint64_t enqueued_ = 0;
    uint64_t taken_ = 0;         // tasks taken off the queue to run (tickets up to it)
    bool running_ = false;       // a thread (the worker or a caller) runs taken tasks
    std::atomic<uint32_t> callersRunUpTo_{0};
    bool workerAsleep_ = false;  // enqueue signals only then: no syscall per task
    int firstError_ = 0;
    std::atomic<bool> stopping_{false};  // set under mutex_, so the worker's wait sees it
    // Counted without the lock; a synchronize that needs a count sets wakeAt_, and
    // the worker takes the lock to wake it only when the count reaches it. What the
    // running thread writes per task and what callers write per enqueue sit on separate
    // cache lines, so a task and an enqueue on two cores do not trade lines.
    alignas(64) std::atomic<uint64_t> completed_{0};
    int lastResult_ = 0;  // written and read by the thread holding running_
    alignas(64) std::atomic<uint64_t> wakeAt_{UINT64_MAX};  // read per task, written per synchronize
    alignas(64) std::thread worker_;
};

// Resolves a handle: nullptr is the process's default stream; a handle that is not
// a live stream returns nullptr. The caller shares ownership, so a concurrent
// aclrtDestroyStream cannot free the stream under it.
std::shared_ptr<Stream> resolveStream(aclrtStream handle);
aclrtStream createStream();
bool destroyStream(aclrtStream handle);
void synchronizeAllStreams();

}  // namespace hostccl::runtime
