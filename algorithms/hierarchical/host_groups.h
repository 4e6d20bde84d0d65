// How the hierarchical algorithms see a communicator: its ranks grouped by host
// (hosts may hold different numbers of ranks), this rank's ring inside its host,
// and the "owners" of piece i: on every host the rank at local index i mod q, so
// every piece 0..qmax-1 has one owner per host even on hosts with fewer ranks.
#pragma once

#include <vector>

#include "algorithms/blocks.h"
#include "algorithms/context.h"
#include "algorithms/cost_model/cost_model.h"
#include "algorithms/rank_group.h"

namespace hostccl {

struct HostGroups {
    explicit HostGroups(const Context& ctx);

    const std::vector<std::vector<uint32_t>>& hosts;  // ranks of every host, in rank order (the communicator's)
    uint32_t myHost = 0;
    RankGroup local;   // this host's ranks, in rank order
    uint32_t qmax = 0; // the most ranks on any host

    uint32_t q() const { return local.size(); }
    // The rounds in which this host's ranks handle pieces (local index j: j, j+q, ...).
    uint32_t rounds() const { return (qmax + q() - 1) / q(); }
    // Piece i's owners, one per host in host order.
    RankGroup owners(uint32_t piece) const;
    // Rank `i` of host `h`'s block of `blocks` (one per communicator rank); empty
    // past the host's last rank.
    Block pieceOf(const BlockLayout& blocks, uint32_t h, uint32_t i) const;
};

// For the cost models: each rank's next rank on its host, and its counterpart (same
// local index, modulo) on the next host.
CostModel::Partner nextOnHost(const CostModel& model);
CostModel::Partner counterpartOnNextHost(const CostModel& model);
// The most ranks on any host, and max over hosts of ceil(qmax / q).
uint32_t mostRanksOnAHost(const CostModel& model);
uint32_t mostRounds(const CostModel& model);

}  // namespace hostccl
