#pragma once

#include "algorithms/algorithm.h"

namespace hostccl {

// Bruck's allgather for any rank count in ceil(lg n) steps, no fold: in step k each
// rank sends the min(2^k, n - 2^k) blocks it holds to rank - 2^k and receives as
// many from rank + 2^k, collecting blocks in the order rank, rank+1, ...; a final
// rotation puts them in place. Equal blocks only (AllGather, not V).
class BruckAllGather final : public Algorithm {
public:
    const char* name() const override { return "bruck"; }
    HcclResult run(Context& ctx) const override;
    Linear cost(const CostModel& model) const override;
};

}  // namespace hostccl
