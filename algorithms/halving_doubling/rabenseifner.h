#pragma once

#include "algorithms/algorithm.h"

namespace hostccl {

// Rabenseifner's allreduce: reduce-scatter by recursive halving, then allgather by
// recursive doubling, over the p2 ranks left by the fold (fold.h). Each rank sends
// 2(p2-1)/p2 of the vector, like the ring, but in 2 lg p2 steps instead of 2(p-1):
// the bandwidth of the ring with the latency of recursive doubling. Each block is
// reduced on one rank only and then copied, so every rank ends with the same bits.
class RabenseifnerAllReduce final : public Algorithm {
public:
    const char* name() const override { return "halving-doubling"; }
    HcclResult run(Context& ctx) const override;
    Linear cost(const CostModel& model) const override;
};

}  // namespace hostccl
