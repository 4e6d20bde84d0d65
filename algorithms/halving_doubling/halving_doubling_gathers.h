#pragma once

#include "algorithms/algorithm.h"

namespace hostccl {

// Reduce-scatter by recursive halving (lg p2 steps, each rank sending (p2-1)/p2 of
// the vector), on a scratch copy of the input. Folded for any rank count: a rank
// that sits out hands its whole vector up and receives just its block back.
// V layouts not packed in rank order are packed into the copy.
class HalvingReduceScatter final : public Algorithm {
public:
    const char* name() const override { return "halving-doubling"; }
    HcclResult run(Context& ctx) const override;
    Linear cost(const CostModel& model) const override;
};

// Allgather by recursive doubling (lg p2 steps). Folded for any rank count: a rank
// that sits out hands its block up and receives the whole result back.
// V layouts not packed in rank order gather in scratch, then move to their places.
class DoublingAllGather final : public Algorithm {
public:
    const char* name() const override { return "halving-doubling"; }
    HcclResult run(Context& ctx) const override;
    Linear cost(const CostModel& model) const override;
};

}  // namespace hostccl
