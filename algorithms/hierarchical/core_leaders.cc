#include "algorithms/hierarchical/core_leaders.h"

#include <algorithm>

#include "algorithms/halving_doubling/fold.h"
#include "algorithms/hierarchical/core_groups.h"

namespace hostccl {

namespace {
// The ranks of this leader's group after itself.
struct Members {
    uint32_t first, end;
};
Members membersOf(const CoreGroups& g) { return {g.leader() + 1, g.endOf(g.mine)}; }

// The leaders' allreduce of `buf`: recursive doubling over the groups, folded to a
// power of two; `incoming` holds one vector.
HcclResult allReduceAmongLeaders(Context& ctx, const CoreGroups& g, char* buf, char* incoming, uint64_t count) {
    const size_t bytes = count * ctx.elemSize();
    const Fold fold(g.cores, g.mine);
    if (fold.sitsOut()) {
        ctx.send(g.leaderOf(g.mine + 1), buf, bytes);
        ctx.recv(g.leaderOf(g.mine + 1), buf, bytes);  // the result comes only after our vector was read
        return ctx.waitAll();
    }
    auto exchange = [&](uint32_t partner, bool sendToo) {
        if (sendToo) ctx.send(partner, buf, bytes);
        ctx.recv(partner, incoming, bytes);
        HOSTCCL_CHECK(ctx.waitAll());
        ctx.reduce(buf, buf, incoming, count);
        return HCCL_SUCCESS;
    };
    if (fold.absorbs()) HOSTCCL_CHECK(exchange(g.leaderOf(g.mine - 1), false));
    for (uint32_t mask = 1; mask < fold.p2; mask <<= 1)
        HOSTCCL_CHECK(exchange(g.leaderOf(fold.realRank(fold.virtualRank() ^ mask)), true));
    if (!fold.absorbs()) return HCCL_SUCCESS;
    ctx.send(g.leaderOf(g.mine - 1), buf, bytes);
    return ctx.waitAll();
}

// A member's whole part: its data to the leader, the result back.
HcclResult memberExchange(Context& ctx, const CoreGroups& g, const void* mine, size_t sendBytes, void* result,
                          size_t resultBytes) {
    ctx.send(g.leader(), mine, sendBytes);
    ctx.recv(g.leader(), result, resultBytes);  // sent only once the leader has our data
    return ctx.waitAll();
}

// The most ranks in a group, and the cost of a step in which every member sends its
// leader `share` of the op's bytes (the leader takes them all in: `share` each).
uint32_t largestGroup(const CostModel& model) {
    const CoreGroups g = coreGroupsOf(model, 0);
    uint32_t most = 1;
    for (uint32_t k = 0; k < g.cores; ++k) most = std::max(most, g.sizeOf(k));
    return most;
}
Linear gatherOnLeaders(const CostModel& model, double share) {
    const Linear one = model.step(toLeader(model), share);
    return Linear{one.fixed, one.perByte * (largestGroup(model) - 1)};
}
// Every leader sends every other leader `share` of the op's bytes.
Linear amongLeaders(const CostModel& model, double share) {
    const uint32_t leaders = coreGroupsOf(model, 0).cores;
    if (leaders < 2) return {};
    return double(leaders - 1) * model.step(leadersAcrossBit(model, 1), share);
}
}  // namespace

bool coreLeadersUsable(const Context& ctx) {
    const CollArgs& a = ctx.args();
    const bool packed = a.type == CollType::AlltoAll || (a.type == CollType::AlltoAllV && a.equalEverywhere);
    if (algoOpOf(a.type) == AlgoOp::AlltoAll && !packed) return false;
    return crowdedOnOneHost(ctx) && a.type != CollType::AllGatherV && a.type != CollType::ReduceScatterV;
}

bool coreLeadersWeighed(const Context& ctx) {
    constexpr uint32_t kFewest = 3, kMost = 8;  // ranks per core
    const uint32_t cores = coreGroupsOf(ctx).cores;
    return ctx.size() >= kFewest * cores && ctx.size() <= kMost * cores;
}

HcclResult CoreLeadersAllReduce::run(Context& ctx) const {
    const CollArgs& a = ctx.args();
    const size_t bytes = a.count * ctx.elemSize();
    char* buf = static_cast<char*>(a.recvBuf);
    if (a.sendBuf != buf) ctx.copy(buf, a.sendBuf, bytes);
    const CoreGroups g = coreGroupsOf(ctx);
    if (g.leader() != ctx.rank()) return memberExchange(ctx, g, buf, bytes, buf, bytes);
    const Members m = membersOf(g);
    char* slots = ctx.scratch(bytes * (m.end - m.first + 1));  // one per member, then the leaders' incoming
    for (uint32_t r = m.first; r < m.end; ++r) ctx.recv(r, slots + (r - m.first) * bytes, bytes);
    HOSTCCL_CHECK(ctx.waitAll());
    for (uint32_t r = m.first; r < m.end; ++r) ctx.reduce(buf, buf, slots + (r - m.first) * bytes, a.count);
    HOSTCCL_CHECK(allReduceAmongLeaders(ctx, g, buf, slots + (m.end - m.first) * bytes, a.count));
    for (uint32_t r = m.first; r < m.end; ++r) ctx.send(r, buf, bytes);
    return ctx.waitAll();
}

// In, reduced on the leader; among the leaders, recursive doubling; out.
Linear CoreLeadersAllReduce::cost(const CostModel& model) const {
    const uint32_t most = largestGroup(model);
    Linear c = 2.0 * gatherOnLeaders(model, 1.0) + double(most - 1) * model.reduce(1.0);
    const Fold fold(coreGroupsOf(model, 0).cores, 0);
    if (fold.extra > 0) c += 2.0 * model.step(leadersAcrossBit(model, 1), 1.0);
    for (uint32_t mask = 1; mask < fold.p2; mask <<= 1)
        c += model.step(leadersAcrossBit(model, mask), 1.0) + model.reduce(1.0);
    return c;
}

HcclResult CoreLeadersAllGather::run(Context& ctx) const {
    const CollArgs& a = ctx.args();
    const uint32_t n = ctx.size(), me = ctx.rank();
    const size_t block = a.count * ctx.elemSize();
    char* out = static_cast<char*>(a.recvBuf);
    const CoreGroups g = coreGroupsOf(ctx);
    if (g.leader() != me) return memberExchange(ctx, g, a.sendBuf, block, out, n * block);
    if (a.sendBuf != out + me * block) ctx.copy(out + me * block, a.sendBuf, block);
    const Members m = membersOf(g);
    for (uint32_t r = m.first; r < m.end; ++r) ctx.recv(r, out + r * block, block);
    HOSTCCL_CHECK(ctx.waitAll());
    for (uint32_t k = 0; k < g.cores; ++k) {
        if (k == g.mine) continue;
        ctx.send(g.leaderOf(k), out + g.leader() * block, g.sizeOf(g.mine) * block);
        ctx.recv(g.leaderOf(k), out + g.leaderOf(k) * block, g.sizeOf(k) * block);
    }
    HOSTCCL_CHECK(ctx.waitAll());
    for (uint32_t r = m.first; r < m.end; ++r) ctx.send(r, out, n * block);
    return ctx.waitAll();
}

// opBytes is the whole result: a block in, the leaders' groups across, everything out.
Linear CoreLeadersAllGather::cost(const CostModel& model) const {
    const double n = model.ranks(), most = largestGroup(model);
    return gatherOnLeaders(model, 1.0 / n) + amongLeaders(model, most / n) + gatherOnLeaders(model, 1.0);
}

HcclResult CoreLeadersReduceScatter::run(Context& ctx) const {
    const CollArgs& a = ctx.args();
    const uint32_t n = ctx.size(), me = ctx.rank();
    const size_t block = a.count * ctx.elemSize(), whole = n * block;
    const CoreGroups g = coreGroupsOf(ctx);
    if (g.leader() != me) return memberExchange(ctx, g, a.sendBuf, whole, a.recvBuf, block);
    const Members m = membersOf(g);
    const uint32_t members = m.end - m.first, mineBlocks = g.sizeOf(g.mine);
    // The group's sums, each member's input, then each other leader's part of ours.
    char* sums = ctx.scratch(whole * (1 + members) + block * mineBlocks * g.cores);
    char* inputs = sums + whole;
    char* parts = inputs + whole * members;
    ctx.copy(sums, a.sendBuf, whole);
    for (uint32_t r = m.first; r < m.end; ++r) ctx.recv(r, inputs + (r - m.first) * whole, whole);
    HOSTCCL_CHECK(ctx.waitAll());
    for (uint32_t i = 0; i < members; ++i) ctx.reduce(sums, sums, inputs + i * whole, n * a.count);
    char* ours = sums + g.leader() * block;
    for (uint32_t k = 0; k < g.cores; ++k) {
        if (k == g.mine) continue;
        ctx.send(g.leaderOf(k), sums + g.leaderOf(k) * block, g.sizeOf(k) * block);
        ctx.recv(g.leaderOf(k), parts + k * mineBlocks * block, mineBlocks * block);
    }
    HOSTCCL_CHECK(ctx.waitAll());
    for (uint32_t k = 0; k < g.cores; ++k)  // in group order: one sum, whoever computes it
        if (k != g.mine) ctx.reduce(ours, ours, parts + k * mineBlocks * block, mineBlocks * a.count);
    for (uint32_t r = m.first; r < m.end; ++r) ctx.send(r, sums + r * block, block);
    ctx.copy(a.recvBuf, ours, block);
    return ctx.waitAll();
}

// opBytes is the whole input: all of it in and reduced, the groups' parts across, a block out.
Linear CoreLeadersReduceScatter::cost(const CostModel& model) const {
    const double n = model.ranks(), most = largestGroup(model);
    return gatherOnLeaders(model, 1.0) + (most - 1) * model.reduce(1.0) + amongLeaders(model, most / n) +
           gatherOnLeaders(model, 1.0 / n);
}

HcclResult CoreLeadersAlltoAll::run(Context& ctx) const {
    const CollArgs& a = ctx.args();
    const uint32_t n = ctx.size(), me = ctx.rank();
    const size_t block = (a.sendCounts.empty() ? 0 : a.sendCounts[0]) * ctx.elemSize(), whole = n * block;
    const char* in = static_cast<const char*>(a.sendBuf);
    char* out = static_cast<char*>(a.recvBuf);
    const CoreGroups g = coreGroupsOf(ctx);
    if (g.leader() != me) return memberExchange(ctx, g, in, whole, out, whole);
    const Members m = membersOf(g);
    const uint32_t first = g.leader(), ours = g.sizeOf(g.mine);
    // Every send buffer of the group (the leader's copied: in place it is also the
    // receive buffer), then from each rank s of another group the blocks s sends ours,
    // at s's place, then what each member receives.
    char* sent = ctx.scratch(whole * ours + size_t(n) * ours * block + whole * (ours - 1));
    char* arrived = sent + whole * ours;
    char* results = arrived + size_t(n) * ours * block;
    ctx.copy(sent, in, whole);
    for (uint32_t r = m.first; r < m.end; ++r) ctx.recv(r, sent + (r - first) * whole, whole);
    HOSTCCL_CHECK(ctx.waitAll());
    for (uint32_t k = 0; k < g.cores; ++k) {
        if (k == g.mine) continue;
        for (uint32_t s = first; s < first + ours; ++s)  // what s sends group k: contiguous
            ctx.send(g.leaderOf(k), sent + (s - first) * whole + g.leaderOf(k) * block, g.sizeOf(k) * block);
        for (uint32_t s = g.leaderOf(k); s < g.endOf(k); ++s)
            ctx.recv(g.leaderOf(k), arrived + s * ours * block, ours * block);
    }
    HOSTCCL_CHECK(ctx.waitAll());
    // Rank d's result: from s in this group, s's block for d; from any other s, what arrived.
    for (uint32_t d = first; d < first + ours; ++d) {
        char* result = d == me ? out : results + (d - first - 1) * whole;
        for (uint32_t s = 0; s < n; ++s) {
            const bool local = s >= first && s < first + ours;
            const char* from =
                local ? sent + (s - first) * whole + d * block : arrived + (s * ours + d - first) * block;
            ctx.copy(result + s * block, from, block);
        }
        if (d != me) ctx.send(d, result, whole);
    }
    return ctx.waitAll();
}

// opBytes is one rank's whole input: all of it in, the other groups' parts across (a
// message per sending rank), all of it out.
Linear CoreLeadersAlltoAll::cost(const CostModel& model) const {
    const double n = model.ranks(), most = largestGroup(model);
    return 2.0 * gatherOnLeaders(model, 1.0) + most * amongLeaders(model, most / n) + model.copy(most);
}

HcclResult CoreLeadersBarrier::run(Context& ctx) const {
    const CoreGroups g = coreGroupsOf(ctx);
    if (g.leader() != ctx.rank()) return memberExchange(ctx, g, nullptr, 0, nullptr, 0);
    const Members m = membersOf(g);
    for (uint32_t r = m.first; r < m.end; ++r) ctx.recv(r, nullptr, 0);
    HOSTCCL_CHECK(ctx.waitAll());
    for (uint32_t dist = 1; dist < g.cores; dist <<= 1) {  // dissemination among the leaders
        ctx.send(g.leaderOf((g.mine + dist) % g.cores), nullptr, 0);
        ctx.recv(g.leaderOf((g.mine + g.cores - dist) % g.cores), nullptr, 0);
        HOSTCCL_CHECK(ctx.waitAll());
    }
    for (uint32_t r = m.first; r < m.end; ++r) ctx.send(r, nullptr, 0);
    return ctx.waitAll();
}

}  // namespace hostccl
