#include "planner/compute_rate.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

namespace hostccl::plan {

ComputeRate::ComputeRate(std::vector<std::pair<double, double>> points) : points_(std::move(points)) {
    std::sort(points_.begin(), points_.end());
}

double ComputeRate::at(double callSize) const {
    if (points_.empty()) return 0;
    if (callSize <= points_.front().first) return points_.front().second;
    if (callSize >= points_.back().first) return points_.back().second;
    auto hi = std::upper_bound(points_.begin(), points_.end(), std::make_pair(callSize, 0.0));
    auto lo = hi - 1;
    const double t = std::log(callSize / lo->first) / std::log(hi->first / lo->first);
    return lo->second + t * (hi->second - lo->second);
}

std::string ComputeRate::summary(const char* what, const char* unit, const char* size) const {
    if (points_.empty()) return fmt::format("{}: none", what);
    if (points_.size() == 1) return fmt::format("{}: {:.2f} {} (given)", what, points_[0].second / 1e9, unit);
    std::string s = std::string(what) + ":";
    for (auto& [at, rate] : points_) s += fmt::format(" {:.3g} {} at {:.3g} {};", rate / 1e9, unit, at / 1e6, size);
    s.pop_back();
    return s;
}

namespace {
// The best of three runs of at least 10 ms of `pass`, as `units` per second.
template <typename Pass>
double bestRate(double unitsPerPass, Pass pass) {
    using Clock = std::chrono::steady_clock;
    double best = 0;
    for (int round = 0; round < 3; ++round) {
        int passes = 0;
        const auto began = Clock::now();
        double took = 0;
        do {
            pass();
            ++passes;
            took = std::chrono::duration<double>(Clock::now() - began).count();
        } while (took < 0.01);
        best = std::max(best, unitsPerPass * passes / took);
    }
    return best;
}

}  // namespace

ComputeRate measureElementwiseRate() {
    std::vector<std::pair<double, double>> points;
    for (size_t elems : {size_t(8) << 10, size_t(64) << 10, size_t(512) << 10, size_t(8) << 20}) {
        std::vector<float> x(elems, 0.5f), y(elems, 0.f);
        const double bytes = 3.0 * elems * sizeof(float);  // x and y read, y written
        volatile float sink = 0;
        points.emplace_back(bytes, bestRate(bytes, [&] {
                                for (size_t i = 0; i < elems; ++i) y[i] += x[i];
                                sink = sink + y[elems / 2];
                            }));
    }
    return ComputeRate(points);
}


}  // namespace hostccl::plan
