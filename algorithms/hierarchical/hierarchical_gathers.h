// The other hierarchical collectives (host_groups.h for the grouping): the slow
// links between hosts carry each byte once per host pair, the fast ones inside a
// host do the fan-out.
#pragma once

#include "algorithms/algorithm.h"

namespace hostccl {

// Piece i (the block of local rank i on every host) is gathered among its owners
// across hosts; then, inside each host, ring passes hand every piece of every host
// to every local rank. Any layout, uneven hosts.
class HierarchicalAllGather final : public Algorithm {
public:
    const char* name() const override { return "hierarchical"; }
    HcclResult run(Context& ctx) const override;
    Linear cost(const CostModel& model) const override;
};

// The mirror image: inside each host, ring reduce-scatters leave each local rank
// the host's partial sums of its pieces; across hosts, each piece's owners reduce
// them onto the rank the block belongs to.
class HierarchicalReduceScatter final : public Algorithm {
public:
    const char* name() const override { return "hierarchical"; }
    HcclResult run(Context& ctx) const override;
    Linear cost(const CostModel& model) const override;
};

// One leader per host (the root on its host, else the lowest rank): the root
// scatters the vector over the leaders, who allgather it round a ring; then each
// leader does the same inside its host.
class HierarchicalBroadcast final : public Algorithm {
public:
    const char* name() const override { return "hierarchical"; }
    HcclResult run(Context& ctx) const override;
    Linear cost(const CostModel& model) const override;
};

}  // namespace hostccl
