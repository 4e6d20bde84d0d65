// What a Work handle shares with the completion markers queued around its op.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>

#include "hostccl/hostccl.hpp"
#include "runtime/stream.h"

namespace hostccl {
inline namespace v1 {

struct WorkState {
    explicit WorkState(const char* c) : call(c) {}
    void started();                 // on the stream, just before the op runs
    void finish(HcclResult result); // on the stream, just after it

    const char* call;  // the C entry point, for the error text
    std::mutex mutex;
    std::condition_variable finished;
    std::atomic<bool> done{false};
    HcclResult result = HCCL_SUCCESS;
    std::chrono::steady_clock::time_point startedAt{};
    double runMs = 0.0;
    // Where the completion marker is queued, so a waiter can run the op itself
    // (Stream::runHere). Weak: the marker's task holds this state, and the stream
    // must not end up owned by its own worker.
    std::weak_ptr<runtime::Stream> stream;
    uint64_t ticket = 0;
};

}  // namespace v1
}  // namespace hostccl
