#include "sim/calendar.h"

#include <algorithm>
#include <iterator>

namespace hostccl::sim {

double Calendar::earliestFit(double from, double length) const {
    double candidate = from;
    auto it = busy_.upper_bound(candidate);
    if (it != busy_.begin() && std::prev(it)->second > candidate) --it;  // an interval covering `from`
    for (; it != busy_.end(); ++it) {
        if (it->first >= candidate + length) break;  // the gap before this interval fits
        candidate = std::max(candidate, it->second);
    }
    return candidate;
}

void Calendar::reserve(double start, double length) {
    if (length <= 0) return;
    double end = start + length;
    auto next = busy_.lower_bound(start);
    if (next != busy_.end() && next->first == end) {  // touches the next one: merge
        end = next->second;
        next = busy_.erase(next);
    }
    if (next != busy_.begin()) {
        auto before = std::prev(next);
        if (before->second == start) {  // touches the previous one: extend it
            before->second = end;
            return;
        }
    }
    busy_.emplace_hint(next, start, end);
}

void Calendar::forgetBefore(double t) {
    while (!busy_.empty() && busy_.begin()->second <= t) busy_.erase(busy_.begin());
}

}  // namespace hostccl::sim
