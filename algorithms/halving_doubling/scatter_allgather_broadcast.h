#pragma once

#include "algorithms/algorithm.h"

namespace hostccl {

// Van de Geijn's broadcast for long vectors: a binomial scatter from the root hands
// every rank one block (lg n steps), then a ring allgather over the ranks in order
// from the root completes every copy. Each rank receives about twice the vector
// instead of the binomial tree's whole vector on every level: the root sends only
// (n-1)/n of it.
class ScatterAllGatherBroadcast final : public Algorithm {
public:
    const char* name() const override { return "scatter-allgather"; }
    HcclResult run(Context& ctx) const override;
    Linear cost(const CostModel& model) const override;
};

}  // namespace hostccl
