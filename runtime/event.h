// Events mark a point in a stream. Recording enqueues a task that timestamps the
// event when the stream reaches it. ACL's events are the device's: recording sets
// the event, aclrtResetEvent clears it when its stream gets there, and a stream that
// waits on an event holds until the latest record enqueued before the wait has run
// *and* the event is set; so a stream waiting on an event not recorded yet (or reset
// since) holds until someone records it (HCCL Test's -t mode queues its ops behind
// such a wait and releases them all at once). Synchronizing on or querying an event
// never recorded returns at once, as ACL does.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>

#include "runtime/stream.h"

namespace hostccl::runtime {

class Event : public std::enable_shared_from_this<Event> {
public:
    void record(Stream& stream);
    void reset(Stream& stream);
    bool complete();
    void synchronize();
    void makeStreamWait(Stream& stream);
    // The handle was destroyed: once the records already queued have run, no other
    // can come, so streams holding for one stop holding (their wait fails).
    void abandon();
    // Milliseconds from `start` to `end`; false if either has not completed.
    static bool elapsedMs(Event& start, Event& end, float* ms);

private:
    void waitFor(uint64_t generation);
    // Runs on the waiting stream: 0, or an aclError when the wait could not end well.
    int holdStream(const Stream& stream, uint64_t generation);

    std::mutex mutex_;
    std::condition_variable reached_;
    uint64_t recorded_ = 0;   // records enqueued
    uint64_t completed_ = 0;  // records the stream has reached
    bool set_ = false;        // a record has run since the last reset ran
    bool abandoned_ = false;
    std::chrono::steady_clock::time_point stamp_{};
};

// aclrtSetOpWaitTimeout: how long a stream holds on an event before the wait fails
// with ACL_ERROR_RT_EVENT_SYNC_TIMEOUT (0: no limit, the default).
void setOpWaitTimeoutSeconds(uint32_t seconds);

// Events are shared-owned: a record or wait queued on a stream keeps its event
// alive even if the user destroys the handle first.
void* createEvent();
std::shared_ptr<Event> resolveEvent(void* handle);  // nullptr when not a live event
bool destroyEvent(void* handle);

}  // namespace hostccl::runtime
