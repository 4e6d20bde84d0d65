// HCCL_ALGO (or HcclCommConfig::hcclAlgo): the algorithm family an operator uses
// instead of the adaptive choice, in HCCL's syntax:
//   global:       "level0:NA;level1:<algo>;level2:<algo>"
//   per operator: "<op>=level0:NA;level1:<algo>[;level2:<algo>]/<op>=..."
// with ops allgather, reducescatter, allreduce, broadcast, reduce, scatter, alltoall.
// level0 (inside a server) must be NA and may be left out; level1 picks the family;
// level2 (super-pods) is checked and otherwise ignored, as hostccl has no third level.
// Algorithm names: HCCL's (ring, H-D_R, NHR, NHR_V1, NB, AHC, AHC_BROKE, pipeline,
// pairwise, fullmesh, null, NA) and hostccl's (ring, halving-doubling, hierarchical,
// bruck, pairwise, direct, recursive-doubling, binomial, core-leaders, auto).
#pragma once

#include <array>
#include <string>

#include "common/coll_type.h"

namespace hostccl {

enum class AlgoFamily : uint8_t {
    Auto, Ring, HalvingDoubling, Hierarchical, Bruck, Pairwise, Direct, RecursiveDoubling, Binomial, CoreLeaders
};

// The operator classes HCCL_ALGO names (the V forms follow their plain forms).
enum class AlgoOp : uint8_t { AllGather, ReduceScatter, AllReduce, Broadcast, Reduce, Scatter, AlltoAll, None };
constexpr size_t kAlgoOps = 7;

AlgoOp algoOpOf(CollType t);  // None for barrier and point-to-point
const char* familyName(AlgoFamily f);

struct AlgoOverride {
    std::array<AlgoFamily, kAlgoOps> family{};  // Auto everywhere by default
    AlgoFamily forOp(AlgoOp op) const { return op == AlgoOp::None ? AlgoFamily::Auto : family[size_t(op)]; }
};

// False (and `why`, naming the offending part) when `text` is not valid; an empty
// text means Auto everywhere.
bool parseAlgoOverride(const std::string& text, AlgoOverride* out, std::string* why);

}  // namespace hostccl
