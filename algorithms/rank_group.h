// An ordered subset of a communicator's ranks that runs a building block (a ring
// over one node's ranks, or over one rank per node) while the others do something
// else. Messages still go by communicator rank; `index` is this rank's place.
#pragma once

#include <cstdint>
#include <vector>

#include "algorithms/context.h"

namespace hostccl {

struct RankGroup {
    std::vector<uint32_t> ranks;  // communicator ranks in ring order
    uint32_t index = 0;           // this rank's position in `ranks`

    uint32_t size() const { return static_cast<uint32_t>(ranks.size()); }
    uint32_t next() const { return ranks[(index + 1) % size()]; }
    uint32_t prev() const { return ranks[(index + size() - 1) % size()]; }

    // Every rank of the communicator, in rank order.
    static RankGroup everyone(const Context& ctx) {
        RankGroup g;
        for (uint32_t r = 0; r < ctx.size(); ++r) g.ranks.push_back(r);
        g.index = ctx.rank();
        return g;
    }
};

}  // namespace hostccl
