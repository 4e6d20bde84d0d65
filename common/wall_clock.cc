#include "common/wall_clock.h"

#include <atomic>

namespace hostccl {

namespace {
int64_t microseconds(std::chrono::steady_clock::duration d) {
    return std::chrono::duration_cast<std::chrono::microseconds>(d).count();
}

struct Offset {
    std::atomic<int64_t> wallMinusSteadyUs{0};
    std::atomic<int64_t> sampledAtUs{INT64_MIN};  // steady time of the sample
};
Offset& offset() {
    static Offset o;
    return o;
}
}  // namespace

int64_t wallUsAt(std::chrono::steady_clock::time_point t) {
    Offset& o = offset();
    const int64_t steadyUs = microseconds(t.time_since_epoch());
    const int64_t sampledAt = o.sampledAtUs.load(std::memory_order_acquire);
    if (sampledAt == INT64_MIN || steadyUs - sampledAt > 1'000'000) {
        // Racing threads each sample; any of their samples is right.
        const int64_t wallNow = std::chrono::duration_cast<std::chrono::microseconds>(
                                    std::chrono::system_clock::now().time_since_epoch())
                                    .count();
        const int64_t steadyNow = microseconds(std::chrono::steady_clock::now().time_since_epoch());
        o.wallMinusSteadyUs.store(wallNow - steadyNow, std::memory_order_relaxed);
        o.sampledAtUs.store(steadyNow, std::memory_order_release);
        return wallNow - steadyNow + steadyUs;
    }
    return o.wallMinusSteadyUs.load(std::memory_order_relaxed) + steadyUs;
}

}  // namespace hostccl
