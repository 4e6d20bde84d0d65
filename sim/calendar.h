// When one shared resource (a core, a NIC direction, a leaf switch's link) is busy:
// the intervals reserved on it, so a request can take the earliest gap long enough
// for it instead of queueing behind every earlier one. First come, first served per
// whole message left a sender's NIC idle while its first message waited for a busy
// receiver (head-of-line blocking that TCP, which shares, does not have), and let a
// transfer's CPU part reserved ahead of time hold up a core's work that fit before it.
#pragma once

#include <map>

namespace hostccl::sim {

class Calendar {
public:
    // The earliest start >= `from` at which [start, start + length) is free.
    double earliestFit(double from, double length) const;
    // Marks [start, start + length) busy (it must be free: from earliestFit).
    void reserve(double start, double length);
    // Forgets intervals that end by `t` (no request will start before it again).
    void forgetBefore(double t);
    void clear() { busy_.clear(); }

private:
    std::map<double, double> busy_;  // start -> end; disjoint, adjacent ones merged
};

}  // namespace hostccl::sim
