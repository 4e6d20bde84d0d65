#include "planner/comm_estimator.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "sim/collective_runner.h"
#include "sim/simulation.h"

namespace hostccl::plan {

CommEstimator::CommEstimator(const sim::Platform& world, bool dataInCache) : world_(world), dataInCache_(dataInCache) {}
CommEstimator::~CommEstimator() = default;

sim::Simulation& CommEstimator::simulationFor(const GroupLayout& g) {
    auto it = sims_.find(g);
    if (it == sims_.end())
        it = sims_.emplace(g, std::make_unique<sim::Simulation>(groupPlatform(world_, g), /*carryData=*/false)).first;
    return *it->second;
}

double CommEstimator::seconds(const GroupLayout& g, CollType type, uint64_t bytes) {
    const uint32_t n = g.size();
    if (n <= 1 || bytes == 0) return 0;
    const bool perPeer = type == CollType::AllGather || type == CollType::ReduceScatter || type == CollType::AlltoAllV;
    bytes = std::max<uint64_t>(bytes, perPeer ? 4ull * n : 4);
    const auto key = std::make_tuple(g, static_cast<int>(type), bytes);
    if (auto hit = cache_.find(key); hit != cache_.end()) return hit->second;
    sim::OpSpec spec;
    spec.type = type;
    spec.bytes = bytes;
    // In a training step the GEMMs between two collectives stream weights and
    // activations through the caches: a collective finds its data in memory, so it
    // runs at the bulk rates whatever its size (4 ranks on 2 cores moved a 4 MB
    // gradient bucket's bytes at about a fifth of the in-cache copy rate).
    if (!dataInCache_) spec.workingSetBytes = std::numeric_limits<uint64_t>::max();
    const sim::OpOutcome o = sim::runCollective(simulationFor(g), spec);
    // The simulator runs hostccl's own algorithms; one failing is a bug, not an input error.
    if (!o.ok)
        throw std::runtime_error(fmt::format("simulating {} of {} B on {} hosts x {} ranks failed: {}",
                                             sim::collectiveKey(type), bytes, g.hosts, g.perHost, o.error));
    ++simulated_;
    return cache_[key] = o.seconds;
}

double CommEstimator::sendSeconds(const GroupLayout& pair, uint64_t bytes) {
    return seconds(pair, CollType::Broadcast, bytes);  // a broadcast of two ranks is one message
}

}  // namespace hostccl::plan
