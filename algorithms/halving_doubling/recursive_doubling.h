#pragma once

#include "algorithms/algorithm.h"

namespace hostccl {

// Recursive doubling allreduce for small messages: in round k each rank swaps its
// whole vector with rank ^ 2^k and reduces, so lg p rounds replace the ring's
// 2(p-1) steps. Non-powers of two fold first (MPICH's scheme): of the first 2r
// ranks (r = p - 2^floor(lg p)) each even one hands its vector to the odd one
// above, sits out, and gets the result back at the end. Partners reduce the same
// two operands in opposite order, which is exact for every op here (commutative,
// and fp16/bf16 round once), so every rank ends with identical bits.
class RecursiveDoublingAllReduce final : public Algorithm {
public:
    const char* name() const override { return "recursive-doubling"; }
    HcclResult run(Context& ctx) const override;
    Linear cost(const CostModel& model) const override;
};

}  // namespace hostccl
