#include "planner/gemm_timer.h"

#include <cblas.h>
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <vector>

namespace hostccl::plan {

namespace {

// FLOP/s of `s`: the best of three runs of at least 5 ms, each call on the next of
// enough sets of operands to hold 16 MiB.
double timeShape(const GemmShape& s) {
    using Clock = std::chrono::steady_clock;
    const size_t a = s.m * s.k, b = s.k * s.n, c = s.m * s.n, per = a + b + c;
    const size_t sets = std::clamp<size_t>((size_t(16) << 20) / (per * sizeof(float)) + 1, 1, 64);
    std::vector<float> buf(sets * per, 0.25f);
    const int lda = int(s.transA ? s.m : s.k), ldb = int(s.transB ? s.k : s.n);
    size_t next = 0;
    double best = 0;
    for (int round = 0; round < 3; ++round) {
        int calls = 0;
        double took = 0;
        const auto began = Clock::now();
        do {
            float* base = &buf[next * per];
            next = (next + 1) % sets;
            cblas_sgemm(CblasRowMajor, s.transA ? CblasTrans : CblasNoTrans, s.transB ? CblasTrans : CblasNoTrans, int(s.m),
                        int(s.n), int(s.k), 1.f, base, lda, base + a, ldb, 0.f, base + a + b, int(s.n));
            ++calls;
            took = std::chrono::duration<double>(Clock::now() - began).count();
        } while (took < 0.005);
        best = std::max(best, s.flops() * calls / took);
    }
    return best;
}

}  // namespace

GemmTimer GemmTimer::flat(double flopsPerSecond) {
    GemmTimer t;
    t.state_ = std::make_shared<State>();
    t.state_->flat = flopsPerSecond;
    return t;
}

GemmTimer GemmTimer::measured() {
    openblas_set_num_threads(1);  // a rank computes on one core, as the training examples run
    GemmTimer t;
    t.state_ = std::make_shared<State>();
    return t;
}

double GemmTimer::seconds(const GemmShape& s) const {
    if (!state_ || s.flops() <= 0) return 0;
    if (state_->flat > 0) return s.flops() / state_->flat;
    GemmShape timed = s;
    // Large products run at the rate of a slice of their rows (m, or k for the weight gradient).
    uint64_t& rows = s.transA ? timed.k : timed.m;
    while (timed.flops() > kMeasuredFlops && rows > 64) rows /= 2;
    auto it = state_->rate.find(timed);
    if (it == state_->rate.end()) it = state_->rate.emplace(timed, timeShape(timed)).first;
    return s.flops() / it->second;
}

std::string GemmTimer::summary() const {
    if (!state_) return "GEMMs not counted";
    if (state_->flat > 0) return fmt::format("sgemm {:.2f} GFLOP/s per core (given)", state_->flat / 1e9);
    if (state_->rate.empty()) return "sgemm on one core, by shape: none timed";
    double lo = 1e300, hi = 0;
    for (auto& [shape, rate] : state_->rate) lo = std::min(lo, rate), hi = std::max(hi, rate);
    return fmt::format("sgemm on one core, by shape: {} shapes timed, {:.1f}-{:.1f} GFLOP/s", state_->rate.size(), lo / 1e9,
                       hi / 1e9);
}

}  // namespace hostccl::plan
