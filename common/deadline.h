// A point in time every wait is bounded by. Deadline::never() is for waits
// whose bound is the user's (exec timeout 0) or an abort.
#pragma once

#include <chrono>
#include <cstdint>

namespace hostccl {

class Deadline {
public:
    using Clock = std::chrono::steady_clock;

    static Deadline after(std::chrono::milliseconds d) { return Deadline(Clock::now() + d); }
    static Deadline afterSeconds(int64_t s) { return afterSecondsFrom(Clock::now(), s); }
    // `s` seconds after `start`, a reading the caller has anyway.
    static Deadline afterSecondsFrom(Clock::time_point start, int64_t s) {
        return s <= 0 ? never() : Deadline(start + std::chrono::seconds(s));
    }
    static Deadline never() { return Deadline(Clock::time_point::max()); }

    bool expired() const { return Clock::now() >= at_; }
    bool isNever() const { return at_ == Clock::time_point::max(); }
    // Milliseconds left, capped to `cap` (for poll()); 0 when expired.
    int remainingMs(int cap) const {
        if (isNever()) return cap;
        auto left = std::chrono::duration_cast<std::chrono::milliseconds>(at_ - Clock::now()).count();
        if (left <= 0) return 0;
        return left < cap ? static_cast<int>(left) : cap;
    }
    Clock::time_point at() const { return at_; }

private:
    explicit Deadline(Clock::time_point at) : at_(at) {}
    Clock::time_point at_;
};

}  // namespace hostccl
