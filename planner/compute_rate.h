// How fast one core multiplies matrices, as a function of the work in one call:
// small GEMMs run far below the peak, so a layer's time depends on its size per
// micro-batch and tensor-parallel shard. Measured with OpenBLAS's sgemm on one
// thread (the way hostccl's training examples run it, one thread per rank), or
// given as a flat rate.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace hostccl::plan {

class ComputeRate {
public:
    ComputeRate() = default;
    explicit ComputeRate(double flopsPerSecond) : points_{{1.0, flopsPerSecond}} {}
    // Points of (FLOPs in one call, FLOPs per second), any order.
    explicit ComputeRate(std::vector<std::pair<double, double>> points);

    // FLOP/s for calls of `flopsPerCall`, interpolated on a log scale between the
    // measured points and held flat beyond them.
    double at(double flopsPerCall) const;
    double peak() const;
    const std::vector<std::pair<double, double>>& points() const { return points_; }
    bool empty() const { return points_.empty(); }
    std::string summary() const;  // "sgemm 1 core: 2.1 GFLOP/s at 65 KFLOP ... 48 GFLOP/s at 268 MFLOP"

private:
    std::vector<std::pair<double, double>> points_;
};

// sgemm on square matrices from 16 to 512 on one OpenBLAS thread, the best of a few
// runs of at least 10 ms each (about half a second in all).
ComputeRate measureGemmRate();

}  // namespace hostccl::plan
