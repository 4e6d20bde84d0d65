// A rate as a function of the size of one call: how fast one core streams through
// element-wise loops by the bytes of one pass (in cache or from memory), measured,
// or given as a flat rate.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace hostccl::plan {

class ComputeRate {
public:
    ComputeRate() = default;
    explicit ComputeRate(double perSecond) : points_{{1.0, perSecond}} {}
    // Points of (the size of one call, units per second), any order.
    explicit ComputeRate(std::vector<std::pair<double, double>> points);

    // The rate for calls of `callSize`, interpolated on a log scale between the
    // measured points and held flat beyond them.
    double at(double callSize) const;
    bool empty() const { return points_.empty(); }
    // "element-wise on one core: 143 GB/s at 0.0983 MB; ..." (rates in 1e9 `unit`, sizes in 1e6 `size`)
    std::string summary(const char* what, const char* unit, const char* size) const;

private:
    std::vector<std::pair<double, double>> points_;
};

// One core's rate through an element-wise loop (y += x) by the bytes one pass reads
// and writes, from 96 KiB (in cache, like a layer's activations) to 96 MiB (from
// memory, like an optimizer's pass over the parameters): bytes per second.
ComputeRate measureElementwiseRate();

}  // namespace hostccl::plan
