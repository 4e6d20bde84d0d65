// The first failure of a communicator: its code, the rank to blame and what
// happened. Every wait inside an op checks failed() (one load) at least once per
// wait slice, so raising it from any thread (the health monitor, an abort, another
// op) ends the op within one slice with this reason. The first failure wins: what
// follows it is usually its consequence, and every rank should name the cause.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>

#include "hccl/hccl_types.h"

namespace hostccl {

class CommFailure {
public:
    struct Record {
        HcclResult code = HCCL_SUCCESS;
        int64_t culprit = -1;  // the rank this failure is blamed on (-1: none)
        std::string text;
        bool local = true;  // seen here (not relayed by a peer): peers should hear of it
    };

    // True when this is the first failure (and so the one that stays).
    bool raise(HcclResult code, int64_t culprit, std::string text, bool local = true);
    bool failed() const { return failed_.load(std::memory_order_acquire); }
    // What failed() reads, for waits that cancel themselves (net::CancelScope).
    const std::atomic<bool>* failedFlag() const { return &failed_; }
    // Sleeps until a failure is raised or `limit` passes; true when one was.
    bool waitFailed(std::chrono::milliseconds limit) const;
    // Called (once, by whoever raises the first failure) so that waiters blocked
    // without a timeout slice to spare wake at once. Set before any op runs.
    void setWaker(std::function<void()> waker) { waker_ = std::move(waker); }
    HcclResult code() const;
    Record record() const;

private:
    std::atomic<bool> failed_{false};
    mutable std::mutex mutex_;
    mutable std::condition_variable raised_;
    Record record_;
    std::function<void()> waker_;
};

}  // namespace hostccl
