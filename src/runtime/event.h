// Events mark a point in a stream. Recording enqueues a task that timestamps the
// event when the stream reaches it; waiting on an event waits for the latest record
// that was enqueued before the wait (an event never recorded is already complete).
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
    void reset();
    bool complete();
    void synchronize();
    void makeStreamWait(Stream& stream);
    // Milliseconds from `start` to `end`; false if either has not completed.
    static bool elapsedMs(Event& start, Event& end, float* ms);

private:
    void waitFor(uint64_t generation);

    std::mutex mutex_;
    std::condition_variable reached_;
    uint64_t recorded_ = 0;   // records enqueued
    uint64_t completed_ = 0;  // records the stream has reached
    std::chrono::steady_clock::time_point stamp_{};
};

// Events are shared-owned: a record or wait queued on a stream keeps its event
// alive even if the user destroys the handle first.
void* createEvent();
std::shared_ptr<Event> resolveEvent(void* handle);  // nullptr when not a live event
bool destroyEvent(void* handle);

}  // namespace hostccl::runtime
