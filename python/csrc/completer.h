// Completes the futures of a process group's ops off the stream that runs them.
// One thread waits for the ops in the order they were queued (a stream finishes them
// in that order); completing a future runs its callbacks, which may issue collectives
// and wait for their futures (PowerSGD does), so that happens on a pool that starts
// another thread whenever every one it has is busy: a callback waiting for a later op
// never holds up that op's completion.
#pragma once

#include <c10/util/intrusive_ptr.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

namespace hostccl::torch_backend {

class HostcclWork;

class Completer {
public:
    Completer();
    ~Completer();  // lets queued works finish first
    Completer(const Completer&) = delete;
    Completer& operator=(const Completer&) = delete;

    void watch(c10::intrusive_ptr<HostcclWork> work);

private:
    void waitInOrder();
    void runCallbacks();
    void hand(c10::intrusive_ptr<HostcclWork> work);

    std::mutex mutex_;
    std::condition_variable queued_, settledQueued_;
    std::deque<c10::intrusive_ptr<HostcclWork>> pending_;   // ops still to complete, in order
    std::deque<c10::intrusive_ptr<HostcclWork>> settled_;   // futures still to complete
    int idleRunners_ = 0;
    bool stopping_ = false;
    std::thread waiter_;
    std::vector<std::thread> runners_;
};

}  // namespace hostccl::torch_backend
