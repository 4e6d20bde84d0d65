#pragma once

#include "algorithms/algorithm.h"

namespace hostccl {

// Binomial tree rooted at `root`: lg n rounds; rank v (relative to the root)
// receives from v - 2^k where 2^k is its lowest set bit, then forwards.
class BinomialBroadcast final : public Algorithm {
public:
    const char* name() const override { return "binomial"; }
    HcclResult run(Context& ctx) const override;
    Linear cost(const CostModel& model) const override;
};

// The mirror image: partial results flow up the same tree, reduced on arrival.
class BinomialReduce final : public Algorithm {
public:
    const char* name() const override { return "binomial"; }
    HcclResult run(Context& ctx) const override;
    Linear cost(const CostModel& model) const override;
};

// For the cost model: in round `mask` of a tree rooted at rank 0, the child each
// sending rank serves (ranks that do not send sit the round out).
CostModel::Partner binomialChild(uint32_t n, uint32_t mask);

}  // namespace hostccl
