// Ring building blocks (Patarasuk & Yuan): each of n-1 steps moves one block to
// the next rank while the previous rank's block arrives, so every link carries
// (n-1)/n of the data and the bandwidth term is optimal.
#pragma once

#include "algorithms/blocks.h"
#include "algorithms/context.h"
#include "algorithms/cost_model/cost_model.h"
#include "algorithms/rank_group.h"

namespace hostccl {

// Both run over `group` (RankGroup::everyone for the whole communicator); block i
// of a layout belongs to the group's i-th rank.
//
// Reduce-scatter: afterwards `out` holds the reduction over the group of block r
// (r = this rank's index) of `in`. When `full` is given (same layout as `in`), partial sums
// are kept in it (allreduce works in the receive buffer); otherwise they travel
// through two scratch blocks. Incoming data is reduced on arrival.
HcclResult ringReduceScatter(Context& ctx, const RankGroup& group, const BlockLayout& blocks, const char* in, char* full,
                             char* out);

// All-gather in place: `buf` (layout `blocks`) holds this rank's block; afterwards
// it holds every rank's block. With `own` (out of place), this rank's block is still
// only there: the first step sends it from `own` and copies it into `buf` while the
// peers read it.
HcclResult ringAllGather(Context& ctx, const RankGroup& group, const BlockLayout& blocks, char* buf,
                         const char* own = nullptr);

// One pass round every rank (n-1 steps, 1/n of the data each): the reduce-scatter's
// cost when `reduces`, else the all-gather's.
Linear ringPassCost(const CostModel& model, bool reduces);

}  // namespace hostccl
