// The algorithm interface. Each algorithm serves some collectives for any rank
// count; the selector (algorithms/selector.h) picks one per call.
#pragma once

#include "algorithms/context.h"
#include "algorithms/cost_model/cost_model.h"

namespace hostccl {

class Algorithm {
public:
    virtual ~Algorithm() = default;
    virtual const char* name() const = 0;
    virtual HcclResult run(Context& ctx) const = 0;
    // Estimated time as a function of the op's bytes on this communicator's shape
    // (ranks, hosts, cores) and parameters. Only algorithms the selector weighs
    // against others need one; the sole algorithm of an op keeps the default.
    virtual Linear cost(const CostModel& model) const {
        (void)model;
        return {};
    }
};

}  // namespace hostccl
