// The two halves of Rabenseifner's allreduce, shared by the halving-doubling
// allreduce, reduce-scatter and allgather. Both run among the p2 ranks the fold
// leaves (fold.h), on a buffer split into p2 contiguous virtual blocks in rank
// order: virtual block i is where virtual rank i's result ends.
#pragma once

#include "algorithms/blocks.h"
#include "algorithms/halving_doubling/fold.h"

namespace hostccl {

// Recursive halving: lg p2 steps, each sending half of the remaining range to the
// partner across the current bit and reducing the partner's half into ours. At the
// end virtual block v of `buf` holds the reduction over every rank.
HcclResult halvingReduceScatter(Context& ctx, const Fold& fold, char* buf, const BlockLayout& vblocks);

// Recursive doubling: lg p2 steps, each swapping everything gathered so far with
// the partner across the next bit. Starts with virtual block v in place.
HcclResult doublingAllGather(Context& ctx, const Fold& fold, char* buf, const BlockLayout& vblocks);

// Virtual blocks from one block per real rank: virtual rank v owns the blocks of the
// real ranks folded into it.
BlockLayout virtualBlocks(const Fold& fold, const BlockLayout& realBlocks);

// The phases need blocks back to back in rank order (V layouts may be anything).
bool packedInRankOrder(const BlockLayout& b);

// The same blocks back to back in rank order: where the phases work on a V layout that
// is not (a rank's own displacements, which other ranks may not share: the choice of
// algorithm must not depend on them, so the algorithm stages instead).
BlockLayout packedLayoutOf(const BlockLayout& b);

// Each block of `from` (laid out as `fromBlocks`) to where `toBlocks` puts it.
void copyBlocks(Context& ctx, char* to, const BlockLayout& toBlocks, const char* from, const BlockLayout& fromBlocks);

// The phases' costs among the ranks the fold leaves: halving sends 1/2, 1/4, ...
// of the vector (reducing each), doubling the same in reverse.
Linear halvingCost(const CostModel& model);
Linear doublingCost(const CostModel& model);

}  // namespace hostccl
