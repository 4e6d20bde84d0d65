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
#include <memory>
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

    // Waits (at most `seconds`) until every future any completer was given has been
    // completed and its callbacks have returned; true if they all have. Python's exit
    // calls it (hostccl.torch registers it with atexit): a callback that is Python
    // code and runs once the interpreter is finalizing kills its thread, which aborts
    // the process. Call without the GIL: the callbacks need it.
    static bool drainAll(double seconds);

    // Destroys `completer`, then `after` (what its queued ops use, such as the
    // communicator). On one of the completer's own threads (a callback dropped the
    // last reference to the group that owns it) that thread cannot wait for itself:
    // a thread of its own does the job, counted by drainAll until it is done.
    static void release(std::shared_ptr<Completer> completer, std::shared_ptr<void> after);

private:
    bool onOwnThread();
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
