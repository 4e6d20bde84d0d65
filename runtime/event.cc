#include "runtime/event.h"

#include <atomic>
#include <memory>
#include <unordered_map>

#include "common/log.h"

namespace hostccl::runtime {

void Event::record(Stream& stream) {
    uint64_t generation;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        generation = ++recorded_;
    }
    stream.enqueue([self = shared_from_this(), generation] {
        std::lock_guard<std::mutex> lock(self->mutex_);
        if (generation > self->completed_) {
            self->completed_ = generation;
            self->stamp_ = std::chrono::steady_clock::now();
        }
        self->set_ = true;
        self->reached_.notify_all();
        return 0;
    });
}

// In stream order, like the device: a reset queued behind a wait clears the event
// only once that wait is over, so the next wait holds for the next record.
void Event::reset(Stream& stream) {
    stream.enqueue([self = shared_from_this()] {
        std::lock_guard<std::mutex> lock(self->mutex_);
        self->set_ = false;
        self->stamp_ = {};
        return 0;
    });
}

void Event::abandon() {
    std::lock_guard<std::mutex> lock(mutex_);
    abandoned_ = true;
    reached_.notify_all();
}

bool Event::complete() {
    std::lock_guard<std::mutex> lock(mutex_);
    return completed_ >= recorded_;
}

void Event::waitFor(uint64_t generation) {
    std::unique_lock<std::mutex> lock(mutex_);
    reached_.wait(lock, [&] { return completed_ >= generation; });
}

void Event::synchronize() {
    uint64_t generation;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        generation = recorded_;
    }
    waitFor(generation);
}

void Event::makeStreamWait(Stream& stream) {
    uint64_t generation;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        generation = recorded_;
    }
    stream.enqueue([self = shared_from_this(), generation, &stream] { return self->holdStream(stream, generation); });
}

namespace {
std::atomic<uint32_t> opWaitTimeoutSeconds{0};
}  // namespace

void setOpWaitTimeoutSeconds(uint32_t seconds) { opWaitTimeoutSeconds.store(seconds); }

// Holds until the record seen when the wait was queued has run and the event is set.
// Checked every 100 ms so that destroying the waiting stream (or the event) ends
// the hold instead of hanging; aclrtSetOpWaitTimeout bounds it as on a device.
int Event::holdStream(const Stream& stream, uint64_t generation) {
    const uint32_t limit = opWaitTimeoutSeconds.load();
    const auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(limit);
    std::unique_lock<std::mutex> lock(mutex_);
    while (!(set_ && completed_ >= generation)) {
        // Gone or going, with no record left that could still set it: it never will.
        if ((abandoned_ || stream.stopping()) && completed_ == recorded_) {
            log::error("aclrtStreamWaitEvent: the {} before anyone recorded the event it waits on",
                       abandoned_ ? "event was destroyed" : "waiting stream was destroyed");
            return ACL_ERROR_RT_PARAM_INVALID;
        }
        if (limit != 0 && std::chrono::steady_clock::now() >= giveUp) {
            log::error("aclrtStreamWaitEvent: the event was not recorded within aclrtSetOpWaitTimeout's {} s", limit);
            return ACL_ERROR_RT_EVENT_SYNC_TIMEOUT;
        }
        reached_.wait_for(lock, std::chrono::milliseconds(100));
    }
    return 0;
}

bool Event::elapsedMs(Event& start, Event& end, float* ms) {
    std::chrono::steady_clock::time_point t0, t1;
    {
        std::lock_guard<std::mutex> lock(start.mutex_);
        if (start.completed_ == 0 || start.completed_ < start.recorded_) return false;
        t0 = start.stamp_;
    }
    {
        std::lock_guard<std::mutex> lock(end.mutex_);
        if (end.completed_ == 0 || end.completed_ < end.recorded_) return false;
        t1 = end.stamp_;
    }
    *ms = std::chrono::duration<float, std::milli>(t1 - t0).count();
    return true;
}

namespace {
struct EventTable {
    std::mutex mutex;
    std::unordered_map<Event*, std::shared_ptr<Event>> live;
};
EventTable& eventTable() {
    static EventTable* t = new EventTable;
    return *t;
}
}  // namespace

void* createEvent() {
    auto e = std::make_shared<Event>();
    Event* raw = e.get();
    std::lock_guard<std::mutex> lock(eventTable().mutex);
    eventTable().live.emplace(raw, std::move(e));
    return raw;
}

std::shared_ptr<Event> resolveEvent(void* handle) {
    std::lock_guard<std::mutex> lock(eventTable().mutex);
    auto it = eventTable().live.find(static_cast<Event*>(handle));
    return it == eventTable().live.end() ? nullptr : it->second;
}

bool destroyEvent(void* handle) {
    std::shared_ptr<Event> gone;
    {
        std::lock_guard<std::mutex> lock(eventTable().mutex);
        auto it = eventTable().live.find(static_cast<Event*>(handle));
        if (it == eventTable().live.end()) return false;
        gone = std::move(it->second);
        eventTable().live.erase(it);
    }
    gone->abandon();
    return true;
}

}  // namespace hostccl::runtime
