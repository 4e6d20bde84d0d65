// Scale-out predictions: the same model on growing clusters of the same hosts, with
// the per-rank batch held (weak scaling), the best plan of each strategy found by
// the search (data parallel only; with tensor parallelism; with pipeline stages;
// with both), its throughput, and its scaling efficiency: throughput over one
// rank's times the ranks. Collective times come from the simulator at every size.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "planner/search.h"

namespace hostccl::plan {

struct ScalePoint {
    uint32_t ranks = 0;
    std::string strategy;     // "dp", "dp+tp", "dp+pp", "dp+tp+pp"
    bool found = false;       // some plan of this strategy fits
    RankedPlan best;
    double samplesPerSecond = 0;
    double efficiency = 0;    // samplesPerSecond / (one rank's x ranks)
};

struct ScaleResult {
    double singleRankSamplesPerSecond = 0;
    std::vector<ScalePoint> points;  // by ranks, then strategy
    // Per strategy: the first rank count where efficiency fell below half (0: never).
    std::vector<std::pair<std::string, uint32_t>> stopsScaling;
};

// `perRankBatch` samples per rank and step; `space` limits the search (keep it small:
// every point runs it). `rankCounts` must be multiples of the cluster's ranks per host.
ScaleResult predictScaling(const ModelSpec& model, uint64_t perRankBatch, uint64_t memoryLimit, const Cluster& host,
                           const std::vector<uint32_t>& rankCounts, const SearchSpace& space);
std::string scaleTable(const ScaleResult& r);

}  // namespace hostccl::plan
