// What a Work handle shares with the completion markers queued around its op.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>

#include "hostccl/hostccl.hpp"

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
};

}  // namespace v1
}  // namespace hostccl
