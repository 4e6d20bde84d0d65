#pragma once

#include "algorithms/algorithm.h"

namespace hostccl {

// Send, Recv and BatchSendRecv: every item is posted before any wait, so the items
// of a batch never block each other.
class PointToPoint final : public Algorithm {
public:
    const char* name() const override { return "p2p"; }
    HcclResult run(Context& ctx) const override;
};

}  // namespace hostccl
