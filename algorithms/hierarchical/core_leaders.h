// Small collectives for ranks crowding one host's cores (core_groups.h): each core's
// ranks hand their data to the core's leader, the leaders (one per core) work among
// themselves, and each leader hands the result to its core's ranks. Every rank runs
// once per op where a flat algorithm needs each of them once per step (8 ranks on 2
// cores, recursive doubling: about 30 thread switches per 8-byte allreduce).
// The leader gathers whole vectors: for small messages only (the cost model weighs it).
#pragma once

#include "algorithms/algorithm.h"

namespace hostccl {

class CoreLeadersAllReduce final : public Algorithm {
public:
    const char* name() const override { return "core-leaders"; }
    HcclResult run(Context& ctx) const override;
    Linear cost(const CostModel& model) const override;
};

// Plain AllGather (equal blocks packed in rank order).
class CoreLeadersAllGather final : public Algorithm {
public:
    const char* name() const override { return "core-leaders"; }
    HcclResult run(Context& ctx) const override;
    Linear cost(const CostModel& model) const override;
};

// Plain ReduceScatter (equal blocks packed in rank order).
class CoreLeadersReduceScatter final : public Algorithm {
public:
    const char* name() const override { return "core-leaders"; }
    HcclResult run(Context& ctx) const override;
    Linear cost(const CostModel& model) const override;
};

// All-to-all with equal blocks packed in rank order (HcclAlltoAll, a uniform
// HcclAlltoAllVC): each leader gathers its core's send buffers, passes every other
// leader the blocks its core's ranks send there (one message per sending rank: the
// blocks for a group are contiguous in each send buffer), and hands each rank of its
// core the n blocks it receives.
class CoreLeadersAlltoAll final : public Algorithm {
public:
    const char* name() const override { return "core-leaders"; }
    HcclResult run(Context& ctx) const override;
    Linear cost(const CostModel& model) const override;
};

class CoreLeadersBarrier final : public Algorithm {
public:
    const char* name() const override { return "core-leaders"; }
    HcclResult run(Context& ctx) const override;
};

// Whether the call can run on core leaders: ranks crowding one host, and for the
// gathers and the all-to-all the plain forms (equal blocks packed in rank order).
bool coreLeadersUsable(const Context& ctx);
// Whether the selector weighs them (and the barrier takes them): three to eight ranks
// per core. At two, the flat algorithms' first steps already pair the ranks of a core
// (worker_affinity.h places neighbours together), and gathering on a leader only
// serialises them (4 ranks on 2 cores, 8 bytes: allgather 3.65 -> 3.94 us, reduce-
// scatter 3.5 -> 4.5, barrier 3.4 -> 3.75); from three it saves thread switches (6
// ranks: allgather 8.2 -> 6.6, barrier 10.6 -> 6.3; 8 ranks: allreduce 14.5 -> 11.2,
// allgather 15.9 -> 11.8, reduce-scatter 17.7 -> 11.6, all-to-all 15.6 -> 11.1, barrier
// 16 -> 10.6; 16 ranks: allreduce 70 -> 44, barrier 64 -> 39). Past eight, a leader takes
// one message per rank of its core in turn, and links to each of them: hundreds of
// threads on a few cores keep to the flat algorithms' log n peers (256 ranks on 2 cores:
// 129 links a leader).
bool coreLeadersWeighed(const Context& ctx);

}  // namespace hostccl
