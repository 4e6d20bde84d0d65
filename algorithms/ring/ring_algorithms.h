#pragma once

#include "algorithms/algorithm.h"

namespace hostccl {

class RingAllReduce final : public Algorithm {
public:
    const char* name() const override { return "ring"; }
    HcclResult run(Context& ctx) const override;
    Linear cost(const CostModel& model) const override;
};

class RingAllGather final : public Algorithm {
public:
    const char* name() const override { return "ring"; }
    HcclResult run(Context& ctx) const override;
    Linear cost(const CostModel& model) const override;
};

class RingReduceScatter final : public Algorithm {
public:
    const char* name() const override { return "ring"; }
    HcclResult run(Context& ctx) const override;
    Linear cost(const CostModel& model) const override;
};

}  // namespace hostccl
