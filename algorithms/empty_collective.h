#pragma once

#include "algorithms/algorithm.h"

namespace hostccl {

// A collective with no bytes to move (count 0) completes at once, as NCCL discards
// empty collectives. Only sizes every rank knows alike decide it, so all ranks skip
// the same op and their sequence numbers stay in step.
class EmptyCollective final : public Algorithm {
public:
    const char* name() const override { return "none"; }
    HcclResult run(Context& ctx) const override {
        (void)ctx;
        return HCCL_SUCCESS;
    }
};

}  // namespace hostccl
