#include "planner/group_layout.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <tuple>

namespace hostccl::plan {

bool GroupLayout::operator<(const GroupLayout& o) const {
    return std::tie(hosts, perHost, concurrent) < std::tie(o.hosts, o.perHost, o.concurrent);
}

namespace {
// The layout of a group whose members sit in `slots` (every group of the kind
// is shaped alike, so the first one tells).
template <typename SlotOf>
GroupLayout layoutOf(const sim::Platform& world, uint32_t members, SlotOf slotOf) {
    std::map<uint32_t, uint32_t> perHost;
    for (uint32_t k = 0; k < members; ++k) ++perHost[slotOf(k) / world.ranksPerHost];
    GroupLayout g;
    g.hosts = static_cast<uint32_t>(perHost.size());
    g.perHost = 0;
    for (auto& h : perHost) g.perHost = std::max(g.perHost, h.second);
    g.concurrent = std::max<uint32_t>(1, world.ranksPerHost / g.perHost);
    return g;
}
}  // namespace

GroupLayout tensorLayout(const sim::Platform& world, uint32_t, uint32_t tp, uint32_t) {
    return layoutOf(world, tp, [](uint32_t k) { return k; });
}

GroupLayout dataLayout(const sim::Platform& world, uint32_t dp, uint32_t tp, uint32_t) {
    return layoutOf(world, dp, [tp](uint32_t k) { return k * tp; });
}

GroupLayout stageHopLayout(const sim::Platform& world, uint32_t dp, uint32_t tp, uint32_t stage) {
    const uint32_t stride = dp * tp;
    GroupLayout g = layoutOf(world, 2, [&](uint32_t k) { return (stage + k) * stride; });
    // Every rank of the stage sends at once: dp x tp pairs, spread over the hosts.
    g.concurrent = std::max<uint32_t>(1, std::min(stride, world.ranksPerHost));
    return g;
}

sim::Platform groupPlatform(const sim::Platform& world, const GroupLayout& g) {
    sim::Platform p = world;
    p.hosts = g.hosts;
    p.ranksPerHost = g.perHost;
    if (world.coresPerHost > 0) {
        // Each host's cores serve all its ranks; this group gets its ranks' share.
        const double share = world.cores() * world.coreSpeed * g.perHost / world.ranksPerHost;
        sim::setCores(&p, share >= 1 ? std::floor(share) : share);
    }
    if (g.hosts > 1 && world.nicBytesPerSec > 0) p.nicBytesPerSec = world.nicBytesPerSec / g.concurrent;
    return p;
}

}  // namespace hostccl::plan
