// Threads that are detached from birth. `std::thread(fn).detach()` leaves a window in
// which the thread may already have finished but is not yet detached; a process that
// exits then leaks it (ThreadSanitizer reports it, intermittently, under load). The
// per-connection and per-notice threads are started here instead.
#pragma once

#include <pthread.h>

#include <memory>
#include <system_error>
#include <type_traits>
#include <utility>

namespace hostccl {

template <typename F>
void startDetached(F&& fn) {
    using Task = std::decay_t<F>;  // may be move-only (lambdas owning a socket)
    auto* task = new Task(std::forward<F>(fn));
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    pthread_t thread;
    const int rc = pthread_create(
        &thread, &attr,
        [](void* p) -> void* {
            std::unique_ptr<Task> run(static_cast<Task*>(p));
            (*run)();
            return nullptr;
        },
        task);
    pthread_attr_destroy(&attr);
    if (rc != 0) {
        delete task;
        throw std::system_error(rc, std::generic_category(), "pthread_create");
    }
}

}  // namespace hostccl
