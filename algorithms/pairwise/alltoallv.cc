#include "algorithms/pairwise/alltoallv.h"

#include <algorithm>
#include <cstring>

namespace hostccl {

HcclResult PairwiseAlltoAllV::run(Context& ctx) const {
    const CollArgs& a = ctx.args();
    const uint32_t n = ctx.size(), r = ctx.rank();
    const size_t es = ctx.elemSize();
    const char* in = static_cast<const char*>(a.sendBuf);
    char* out = static_cast<char*>(a.recvBuf);
    if (a.sendCounts[r] > 0) ctx.copy(out + a.recvDispls[r] * es, in + a.sendDispls[r] * es, a.sendCounts[r] * es);
    // The first op's links are set up several at a time, where each rank has a core
    // for its setups; on a crowded host setups are CPU-bound and one at a time was
    // faster (256 processes on 2 cores: 34 s in order, 47 s with 32 at a time).
    if (!ctx.singleProcess() && !ctx.crowded()) ctx.connectAheadToAll();
    for (uint32_t s = 1; s < n; ++s) {
        uint32_t to = (r + s) % n, from = (r + n - s) % n;
        ctx.send(to, in + a.sendDispls[to] * es, a.sendCounts[to] * es);
        ctx.recv(from, out + a.recvDispls[from] * es, a.recvCounts[from] * es);
    }
    return ctx.waitAll();
}

// Every message posted at once: one start-up plus a little per extra message, and
// each rank's 1/n of the data to every other rank. A step costs O(n) to model, so
// past kModelledShifts shifts an evenly spaced sample stands for all n - 1 (each
// rank's cost model would otherwise be O(n^2): seconds at 1024 ranks).
Linear PairwiseAlltoAllV::cost(const CostModel& model) const {
    constexpr uint32_t kModelledShifts = 64;
    const uint32_t n = model.ranks();
    const uint32_t shifts = n - 1, sampled = std::min(shifts, kModelledShifts);
    Linear c;
    for (uint32_t i = 0; i < sampled; ++i) {
        const uint32_t s = 1 + uint32_t(uint64_t(i) * shifts / sampled);
        c.perByte += model.step([n, s](uint32_t r) { return (r + s) % n; }, 1.0 / n).perByte;
    }
    c.perByte *= double(shifts) / std::max(1u, sampled);
    c.fixed = model.allPairsHandshake().fixed;
    return c;
}

}  // namespace hostccl
