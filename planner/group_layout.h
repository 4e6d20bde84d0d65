// Where a plan's groups sit on the hosts. World ranks fill slots host by host,
// tensor-parallel fastest, then data-parallel, then pipeline stages (as
// hostccl::ParallelGroups places them), so a group kind has the same shape
// everywhere: how many hosts one group spans, how many of its ranks share a host,
// and how many groups of that kind use each host at once (they share its NIC and
// cores while they all run the same step).
#pragma once

#include <cstdint>

#include "sim/platform.h"

namespace hostccl::plan {

struct GroupLayout {
    uint32_t hosts = 1;       // hosts one group spans
    uint32_t perHost = 1;     // its ranks on each of them
    uint32_t concurrent = 1;  // groups of this kind on one host at once
    uint32_t size() const { return hosts * perHost; }
    bool operator<(const GroupLayout& o) const;
};

// Layouts on `world` for dp x tp x pp (tp divides the ranks per host).
GroupLayout tensorLayout(const sim::Platform& world, uint32_t dp, uint32_t tp, uint32_t pp);
GroupLayout dataLayout(const sim::Platform& world, uint32_t dp, uint32_t tp, uint32_t pp);
// The two ranks of a send from stage `stage` to the next: one host or two.
GroupLayout stageHopLayout(const sim::Platform& world, uint32_t dp, uint32_t tp, uint32_t stage);

// The world platform cut down to one group of `g`: its hosts and ranks, its share
// of each host's cores, and of the NIC when several groups cross it at once.
sim::Platform groupPlatform(const sim::Platform& world, const GroupLayout& g);

}  // namespace hostccl::plan
