#include "planner/compute_rate.h"

#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>

namespace hostccl::plan {

ComputeRate::ComputeRate(std::vector<std::pair<double, double>> points) : points_(std::move(points)) {
    std::sort(points_.begin(), points_.end());
}

double ComputeRate::at(double flopsPerCall) const {
    if (points_.empty()) return 0;
    if (flopsPerCall <= points_.front().first) return points_.front().second;
    if (flopsPerCall >= points_.back().first) return points_.back().second;
    auto hi = std::upper_bound(points_.begin(), points_.end(), std::make_pair(flopsPerCall, 0.0));
    auto lo = hi - 1;
    const double t = std::log(flopsPerCall / lo->first) / std::log(hi->first / lo->first);
    return lo->second + t * (hi->second - lo->second);
}

double ComputeRate::peak() const {
    double best = 0;
    for (auto& p : points_) best = std::max(best, p.second);
    return best;
}

std::string ComputeRate::summary() const {
    if (points_.empty()) return "no compute rate";
    if (points_.size() == 1) return fmt::format("{:.2f} GFLOP/s per core (given)", points_[0].second / 1e9);
    std::string s = "sgemm on one core:";
    for (auto& [flops, rate] : points_) s += fmt::format(" {:.3g} GFLOP/s at {:.3g} MFLOP;", rate / 1e9, flops / 1e6);
    s.pop_back();
    return s;
}

namespace {
// FLOP/s of n x n x n sgemm: the best of three runs of at least 10 ms each.
double timeSquareGemm(int n) {
    using Clock = std::chrono::steady_clock;
    std::vector<float> a(size_t(n) * n, 0.5f), b(size_t(n) * n, 0.25f), c(size_t(n) * n, 0.f);
    const double flops = 2.0 * n * n * n;
    double best = 0;
    for (int round = 0; round < 3; ++round) {
        int calls = 0;
        const auto began = Clock::now();
        double took = 0;
        do {
            cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.f, a.data(), n, b.data(), n, 0.f, c.data(), n);
            ++calls;
            took = std::chrono::duration<double>(Clock::now() - began).count();
        } while (took < 0.01);
        best = std::max(best, flops * calls / took);
    }
    return best;
}
}  // namespace

ComputeRate measureGemmRate() {
    openblas_set_num_threads(1);  // a rank computes on one core, as the training examples run
    std::vector<std::pair<double, double>> points;
    for (int n : {16, 32, 64, 128, 256, 512}) points.emplace_back(2.0 * n * n * n, timeSquareGemm(n));
    return ComputeRate(points);
}

}  // namespace hostccl::plan
