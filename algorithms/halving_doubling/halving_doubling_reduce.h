#pragma once

#include "algorithms/algorithm.h"

namespace hostccl {

// Rabenseifner's reduce: recursive halving leaves each surviving rank the
// reduction of one block (as in the allreduce), then a binomial gather brings the
// blocks to the root: (p-1)/p of the vector over each rank's links twice instead of
// the binomial tree's whole vector lg p times. Folded for any rank count; when the
// root is a rank the fold sets aside, the rank that absorbed it gathers and hands
// it the result. Non-root ranks work in scratch (their receive buffer is unused).
class HalvingDoublingReduce final : public Algorithm {
public:
    const char* name() const override { return "halving-doubling"; }
    HcclResult run(Context& ctx) const override;
    Linear cost(const CostModel& model) const override;
};

}  // namespace hostccl
