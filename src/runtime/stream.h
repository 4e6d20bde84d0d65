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

    void enqueue(Task task);
    // 0, the first task error since the last synchronize, or
    // ACL_ERROR_RT_STREAM_SYNC_TIMEOUT when the deadline passed first.
    int synchronize(Deadline deadline);
    int32_t device() const { return device_; }
    // Being destroyed: a task that waits for something outside the stream gives up.
    bool stopping() const { return stopping_.load(std::memory_order_acquire); }
    // For a task: the result of the task that ran just before it on this stream (the
    // C++ API's completion markers read their op's result this way).
    int lastResult() const { return lastResult_; }

private:
    void run();
    bool takeBatch(std::vector<Task>* batch);  // false: stopping and drained
    void finished(int rc);

    const int32_t device_;
    std::mutex mutex_;
    std::condition_variable workReady_;
    std::condition_variable workDone_;
    std::vector<Task> queue_;  // swapped with the worker's batch: capacity is reused
    uint64_t enqueued_ = 0;
    bool workerAsleep_ = false;  // enqueue signals only then: no syscall per task
    // Counted without the lock; a synchronize that needs a count sets wakeAt_, and
    // the worker takes the lock to wake it only when the count reaches it.
    std::atomic<uint64_t> completed_{0};
    std::atomic<uint64_t> wakeAt_{UINT64_MAX};
    int firstError_ = 0;
    int lastResult_ = 0;  // written and read only on the worker thread
    std::atomic<bool> stopping_{false};  // set under mutex_, so the worker's wait sees it
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
