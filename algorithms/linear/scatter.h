#pragma once

#include "algorithms/algorithm.h"

namespace hostccl {

// The root sends block i to rank i; every block is posted at once so the links
// run in parallel.
class LinearScatter final : public Algorithm {
public:
    const char* name() const override { return "linear"; }
    HcclResult run(Context& ctx) const override;
};

}  // namespace hostccl
