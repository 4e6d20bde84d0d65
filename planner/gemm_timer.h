// How long one sgemm call takes, by its shape. A layer's GEMMs are skinny when the
// micro-batch is small (16 rows of a 256 x 1024 weight run at a fraction of what a
// square product of the same FLOPs does), so the planner times the shapes a plan
// really calls, each once, on one OpenBLAS thread (as the training examples run
// it), with operands cycled through more memory than the caches hold, as a training
// step's weights are when their layer comes round again. Or a flat rate, given.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <tuple>

namespace hostccl::plan {

struct GemmShape {
    uint64_t m = 0, n = 0, k = 0;  // C (m x n) = op(A) (m x k) x op(B) (k x n)
    bool transA = false, transB = false;
    double flops() const { return 2.0 * double(m) * double(n) * double(k); }
    bool operator<(const GemmShape& o) const {
        return std::tie(m, n, k, transA, transB) < std::tie(o.m, o.n, o.k, o.transA, o.transB);
    }
};

class GemmTimer {
public:
    GemmTimer() = default;  // nothing known: every GEMM is free
    static GemmTimer flat(double flopsPerSecond);
    static GemmTimer measured();

    // Seconds on one idle core. Shapes above kMeasuredFlops are timed with fewer rows
    // (at that size the rate no longer depends on the size).
    double seconds(const GemmShape& s) const;
    bool empty() const { return state_ == nullptr; }
    // "sgemm on one core, by shape: 12 shapes, 41-101 GFLOP/s" or the flat rate.
    std::string summary() const;

    static constexpr double kMeasuredFlops = 256e6;

private:
    struct State {
        double flat = 0;  // FLOP/s; 0: measure
        std::map<GemmShape, double> rate;  // FLOP/s per shape timed
    };
    std::shared_ptr<State> state_;  // shared by copies: a shape is timed once
};

}  // namespace hostccl::plan
