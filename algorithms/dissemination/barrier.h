#pragma once

#include "algorithms/algorithm.h"

namespace hostccl {

// Dissemination barrier (Hensgen, Finkel & Manber): in round k every rank signals
// rank + 2^k and waits for rank - 2^k; after ceil(lg n) rounds everyone has
// (transitively) heard from everyone.
class DisseminationBarrier final : public Algorithm {
public:
    const char* name() const override { return "dissemination"; }
    HcclResult run(Context& ctx) const override;
};

}  // namespace hostccl
