// Picks the algorithm for an op: the family HCCL_ALGO / hcclAlgo names when hostccl
// has it for that op; otherwise the candidate the communicator's cost model
// (cost_model/) scores cheapest for the op's bytes. HOSTCCL_ALGO_EXPLAIN=1 prints
// the score table the first time each collective meets each power-of-two size.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "algorithms/algorithm.h"

namespace hostccl {

// Every candidate's cost on one communicator, computed once when it is created.
class SelectorCosts;
std::shared_ptr<SelectorCosts> prepareSelector(const CostModel& model);
const CostModel& modelOf(const SelectorCosts& costs);

const Algorithm& selectAlgorithm(const Context& ctx);
// The candidates for the op that can run this call (forced or chosen), most robust
// first (the simulator runs each to see which is really fastest).
std::vector<const Algorithm*> usableCandidates(const Context& ctx);

// The cost model's estimate for `a` running this op, seconds (0 without a model).
double estimatedSeconds(const Context& ctx, const Algorithm& a);

// The candidates for the op with their estimated times, which were usable, and
// the choice, one line each (what HOSTCCL_ALGO_EXPLAIN prints).
std::string explainSelection(const Context& ctx);
// HOSTCCL_ALGO_EXPLAIN=1: prints explainSelection on rank 0 the first time each
// collective meets each power-of-two size on this communicator.
void explainIfAsked(const Context& ctx);

}  // namespace hostccl
