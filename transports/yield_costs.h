// Whether a waiting thread's yields still pay. Where every rank has a core, a yield hands
// the core to a thread that gives it back within microseconds (a caller queuing ops,
// another stream's thread). A yield that takes longer met a thread that keeps the core,
// another program's busy loop: every further yield gives it the rest of a time slice,
// milliseconds (2 ranks beside one busy process, 8-byte allreduce: 180-2000 us per op,
// against 0.6-1.0 us when the waiters sleep on their doorbells instead, a wake-up the
// scheduler serves at once). One long yield alone may be a process starting beside the
// job, so a thread stops yielding for a second only after a few within a second.
#pragma once

#include <cstdint>

namespace hostccl::transport {

class YieldCosts {
public:
    static constexpr uint64_t kLongYieldNs = 500'000;
    static constexpr int kLongYieldsToStop = 3;
    static constexpr uint64_t kNoYieldsForNs = 1'000'000'000;

    bool yieldsPay(uint64_t nowNs) const { return nowNs >= noYieldsUntilNs_; }
    // A yield that ended at `nowNs` took `tookNs`.
    void yielded(uint64_t tookNs, uint64_t nowNs) {
        if (tookNs <= kLongYieldNs) return;
        if (nowNs - lastLongNs_ > kNoYieldsForNs) longOnes_ = 0;
        lastLongNs_ = nowNs;
        if (++longOnes_ < kLongYieldsToStop) return;
        noYieldsUntilNs_ = nowNs + kNoYieldsForNs;
        longOnes_ = 0;
    }

private:
    uint64_t noYieldsUntilNs_ = 0;
    uint64_t lastLongNs_ = 0;
    int longOnes_ = 0;  // long yields since the one before lastLongNs_ that was over a second earlier
};

}  // namespace hostccl::transport
