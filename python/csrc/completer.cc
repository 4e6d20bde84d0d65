#include "completer.h"

#include <chrono>

#include "work.h"

namespace hostccl::torch_backend {

namespace {
// Threads beyond the first that complete futures are started only while every other
// one is inside a callback; this bounds them if callbacks never return.
constexpr size_t kMaxRunners = 64;

// Futures given to any completer whose callbacks have not all returned yet: counted
// across completers, so a drain needs no completer to stay alive.
std::mutex gOutstandingMutex;
std::condition_variable gDrained;
size_t gOutstanding = 0;

void oneMoreOutstanding() {
    std::lock_guard<std::mutex> lock(gOutstandingMutex);
    ++gOutstanding;
}

void oneLessOutstanding() {
    std::lock_guard<std::mutex> lock(gOutstandingMutex);
    if (--gOutstanding == 0) gDrained.notify_all();
}
}  // namespace

bool Completer::drainAll(double seconds) {
    std::unique_lock<std::mutex> lock(gOutstandingMutex);
    return gDrained.wait_for(lock, std::chrono::duration<double>(seconds), [] { return gOutstanding == 0; });
}

void Completer::release(std::shared_ptr<Completer> completer, std::shared_ptr<void> after) {
    if (!completer || !completer->onOwnThread()) {
        completer.reset();
        after.reset();
        return;
    }
    oneMoreOutstanding();
    std::thread([completer = std::move(completer), after = std::move(after)]() mutable {
        completer.reset();
        after.reset();
        oneLessOutstanding();
    }).detach();
}

bool Completer::onOwnThread() {
    const std::thread::id self = std::this_thread::get_id();
    std::lock_guard<std::mutex> lock(mutex_);
    if (waiter_.get_id() == self) return true;
    for (const std::thread& t : runners_)
        if (t.get_id() == self) return true;
    return false;
}

Completer::Completer() : waiter_([this] { waitInOrder(); }) {}

Completer::~Completer() {
    {
        std::lock_guard<std::mutex> lock(mutex_);
        stopping_ = true;
    }
    queued_.notify_all();
    waiter_.join();
    {
        std::lock_guard<std::mutex> lock(mutex_);
        settledQueued_.notify_all();
    }
    for (auto& t : runners_) t.join();
}

void Completer::watch(c10::intrusive_ptr<HostcclWork> work) {
    oneMoreOutstanding();
    {
        std::lock_guard<std::mutex> lock(mutex_);
        pending_.push_back(std::move(work));
    }
    queued_.notify_one();
}

void Completer::waitInOrder() {
    for (;;) {
        c10::intrusive_ptr<HostcclWork> work;
        {
            std::unique_lock<std::mutex> lock(mutex_);
            queued_.wait(lock, [&] { return stopping_ || !pending_.empty(); });
            if (pending_.empty()) return;  // stopping, nothing left
            work = std::move(pending_.front());
            pending_.pop_front();
        }
        work->settle();  // never runs a caller's code: only the op's own follow-up steps
        hand(std::move(work));
    }
}

void Completer::hand(c10::intrusive_ptr<HostcclWork> work) {
    std::lock_guard<std::mutex> lock(mutex_);
    settled_.push_back(std::move(work));
    if (idleRunners_ == 0 && runners_.size() < kMaxRunners) {
        ++idleRunners_;  // counted from its start: work queued meanwhile needs no other thread
        runners_.emplace_back([this] { runCallbacks(); });
    } else {
        settledQueued_.notify_one();
    }
}

void Completer::runCallbacks() {  // started counted as idle (hand)
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
        settledQueued_.wait(lock, [&] { return !settled_.empty() || (stopping_ && pending_.empty()); });
        if (settled_.empty()) return;
        --idleRunners_;
        c10::intrusive_ptr<HostcclWork> work = std::move(settled_.front());
        settled_.pop_front();
        lock.unlock();
        work->completeFuture();
        work.reset();
        oneLessOutstanding();
        lock.lock();
        ++idleRunners_;
    }
}

}  // namespace hostccl::torch_backend
