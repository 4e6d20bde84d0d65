#pragma once

#include "algorithms/algorithm.h"

namespace hostccl {

// Bruck's all-to-all for any rank count in ceil(lg n) steps instead of n-1
// messages: rotate the blocks so slot i holds the one bound for rank + i; in step k
// every block whose slot has bit k set moves 2^k ranks on (packed into one message);
// after the last step slot i holds what rank - i sent, and an inverse rotation puts
// it in place. Each byte travels up to lg n hops, so it pays only while start-up
// times dominate. Equal blocks only (AlltoAll, not the V forms).
class BruckAlltoAll final : public Algorithm {
public:
    const char* name() const override { return "bruck"; }
    HcclResult run(Context& ctx) const override;
    Linear cost(const CostModel& model) const override;
};

}  // namespace hostccl
