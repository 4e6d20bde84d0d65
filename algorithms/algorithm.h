// The algorithm interface. Each algorithm serves some collectives for any rank
// count; the selector (algorithms/selector.h) picks one per call.
#pragma once

#include "algorithms/context.h"

namespace hostccl {

class Algorithm {
public:
    virtual ~Algorithm() = default;
    virtual const char* name() const = 0;
    virtual HcclResult run(Context& ctx) const = 0;
};

}  // namespace hostccl
