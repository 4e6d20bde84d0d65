// hostccl's real algorithms on the simulator (sim/): every
// collective with every candidate the selector weighs gives exact results on
// layouts with one host, uneven hosts and powers of two; every collective is exact
// at 1024 and 4096 simulated ranks with the selector's pick; runs are deterministic;
// ranks that disagree fail with the mismatch, and a rank nobody sends to is named.
#include <gtest/gtest.h>

#include <cstring>

#include "sim/collective_runner.h"

using namespace hostccl;
using namespace hostccl::sim;

namespace {

Platform layout(uint32_t hosts, uint32_t ranksPerHost) {
    Platform p = fromCostParams(CostParams::defaults(), hosts, ranksPerHost, 0, LinkClass::Tcp);
    p.nicBytesPerSec = 1.25e9;
    return p;
}

struct Layout {
    uint32_t hosts, ranksPerHost;
};

class EveryCandidate : public ::testing::TestWithParam<Layout> {};

TEST_P(EveryCandidate, EveryCollectiveIsExact) {
    const Layout l = GetParam();
    Simulation sim(layout(l.hosts, l.ranksPerHost), true);
    const uint32_t n = sim.ranks();
    for (CollType t : simulatedCollectives())
        for (uint64_t bytes : {uint64_t(4) * n, uint64_t(4) * n * 37, uint64_t(300000)}) {  // 1 element per block, uneven, large
            OpSpec spec;
            spec.type = t;
            spec.bytes = bytes;
            spec.root = n - 1;
            const std::vector<std::string> names = candidateNames(sim, spec);
            ASSERT_FALSE(names.empty()) << collectiveKey(t);
            for (const std::string& name : names) {
                spec.algorithm = name;
                const OpOutcome o = runCollective(sim, spec);
                SCOPED_TRACE(fmt::format("{} {} B on {} x {} with {}", collectiveKey(t), bytes, l.hosts, l.ranksPerHost, name));
                EXPECT_TRUE(o.ok) << o.error;
                EXPECT_TRUE(o.checked);
                EXPECT_EQ(o.algorithm, name);
                EXPECT_GT(o.seconds, 0);
            }
        }
}

INSTANTIATE_TEST_SUITE_P(Layouts, EveryCandidate,
                         ::testing::Values(Layout{1, 5}, Layout{2, 4}, Layout{3, 3}, Layout{4, 8}, Layout{5, 2}),
                         [](const ::testing::TestParamInfo<Layout>& i) {
                             return std::to_string(i.param.hosts) + "x" + std::to_string(i.param.ranksPerHost);
                         });

class AtScale : public ::testing::TestWithParam<uint32_t> {};

// Exact data at thousands of ranks: one element per block keeps memory small.
TEST_P(AtScale, EveryCollectiveIsExactWithTheSelectorsPick) {
    const uint32_t n = GetParam();
    Simulation sim(layout(n / 8, 8), true);
    for (CollType t : simulatedCollectives()) {
        OpSpec spec;
        spec.type = t;
        spec.bytes = (t == CollType::AllReduce || t == CollType::Broadcast || t == CollType::Reduce) ? 64 * 1024 : 4 * n;
        spec.root = 3;
        const OpOutcome o = runCollective(sim, spec);
        EXPECT_TRUE(o.ok && o.checked) << collectiveKey(t) << " at " << n << " ranks: " << o.error;
        std::printf("[ sim      ] %s %u ranks %lu B: %s, %.1f us, %lu messages\n", collectiveKey(t), n,
                    (unsigned long)o.spec.bytes, o.algorithm.c_str(), o.seconds * 1e6, (unsigned long)o.messages);
    }
}

INSTANTIATE_TEST_SUITE_P(Ranks, AtScale, ::testing::Values(1024u, 4096u));

TEST(SimRuns, AreDeterministic) {
    auto once = [] {
        Simulation sim(layout(4, 4), false);
        OpSpec spec;
        spec.bytes = 1 << 20;
        return runCollective(sim, spec);
    };
    const OpOutcome a = once(), b = once();
    ASSERT_TRUE(a.ok && b.ok) << a.error << b.error;
    EXPECT_EQ(a.seconds, b.seconds);
    EXPECT_EQ(a.algorithm, b.algorithm);
    EXPECT_EQ(a.messages, b.messages);
}

// Sizes only and carrying data predict the same time: the data changes nothing the clock sees.
TEST(SimRuns, SizesOnlyPredictsWhatCarryingDataDoes) {
    for (CollType t : simulatedCollectives()) {
        OpSpec spec;
        spec.type = t;
        spec.bytes = 64 * 12 * 1024;
        Simulation sized(layout(3, 4), false), carried(layout(3, 4), true);
        const OpOutcome a = runCollective(sized, spec), b = runCollective(carried, spec);
        ASSERT_TRUE(a.ok && b.ok) << a.error << b.error;
        EXPECT_EQ(a.seconds, b.seconds) << collectiveKey(t);
        EXPECT_EQ(a.algorithm, b.algorithm);
    }
}

// Ranks that post different sizes to each other fail as a real link's header check
// makes them; one waiting for a message nobody sends is named, nothing hangs.
TEST(SimRuns, DisagreeingRanksFailAndAStuckRankIsNamed) {
    Simulation sim(layout(1, 2), true);
    std::vector<char> a(16), b(16);
    std::string why;
    auto exchange = [&](uint32_t r, size_t bytes) {
        CollArgs args;
        args.dtype = HCCL_DATA_TYPE_INT8;
        Context ctx(sim.view(r), args, Deadline::never(), &sim.failure(r));
        if (r == 0) ctx.send(1, a.data(), bytes);
        else ctx.recv(0, b.data(), bytes);
        return ctx.waitAll();
    };
    HcclResult rc[2];
    ASSERT_TRUE(sim.run([&](uint32_t r) { rc[r] = exchange(r, r == 0 ? 8 : 16); }, 0, &why)) << why;
    EXPECT_EQ(rc[1], HCCL_E_PARA);
    EXPECT_NE(sim.errorOf(1).find("mismatch"), std::string::npos) << sim.errorOf(1);

    Simulation stuck(layout(1, 3), true);
    EXPECT_FALSE(stuck.run(
        [&](uint32_t r) {
            CollArgs args;
            Context ctx(stuck.view(r), args, Deadline::never(), &stuck.failure(r));
            if (r == 2) {
                ctx.recv(0, b.data(), 4);
                ctx.waitAll();
            }
        },
        0, &why));
    EXPECT_NE(why.find("rank 2"), std::string::npos) << why;
}

}  // namespace
