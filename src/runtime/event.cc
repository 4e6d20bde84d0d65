#include "runtime/event.h"

#include <memory>
#include <unordered_map>

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
        self->reached_.notify_all();
        return 0;
    });
}

void Event::reset() {
    std::lock_guard<std::mutex> lock(mutex_);
    completed_ = recorded_;  // nothing outstanding; the old stamp is forgotten
    stamp_ = {};
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
    if (generation == 0) return;
    stream.enqueue([self = shared_from_this(), generation] {
        self->waitFor(generation);
        return 0;
    });
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
    std::lock_guard<std::mutex> lock(eventTable().mutex);
    return eventTable().live.erase(static_cast<Event*>(handle)) == 1;
}

}  // namespace hostccl::runtime
