#pragma once

#include "algorithms/algorithm.h"

namespace hostccl {

// 2D (hierarchical) allreduce for ranks spread over several hosts: a reduce-scatter
// inside each host, an allreduce between hosts of each block among the ranks that
// own it (one per host), and an allgather inside each host. Each rank sends only
// about 1/q of the vector across hosts (q ranks per host) instead of the flat
// ring's share of every block crossing every host boundary.
//
// Hosts may hold different numbers of ranks (3+2+3): the vector is cut into qmax
// blocks (the most ranks on any host); on a host with q ranks, local rank i owns
// blocks i, i+q, i+2q, ..., handled in rounds of q blocks, and block b's inter-host
// group is the rank owning b on every host. Every rank handles its blocks in
// increasing order, so the groups never wait on each other in a cycle.
class HierarchicalAllReduce final : public Algorithm {
public:
    const char* name() const override { return "hierarchical"; }
    HcclResult run(Context& ctx) const override;
    Linear cost(const CostModel& model) const override;
};

}  // namespace hostccl
