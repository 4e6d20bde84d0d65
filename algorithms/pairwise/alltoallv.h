#pragma once

#include "algorithms/algorithm.h"

namespace hostccl {

// Pairwise exchange: at step s rank r sends to r+s and receives from r-s, so no
// rank is ever the target of everyone at once. Serves AlltoAll, AlltoAllV and
// AlltoAllVC (all normalised to counts and displacements).
class PairwiseAlltoAllV final : public Algorithm {
public:
    const char* name() const override { return "pairwise"; }
    HcclResult run(Context& ctx) const override;
    Linear cost(const CostModel& model) const override;
};

}  // namespace hostccl
