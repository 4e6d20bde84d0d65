// The cost model on fixed numbers: HOSTCCL_COST_MODEL parsing, the textbook
// formulas it must reproduce, and the choices that follow from them.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "algorithms/cost_model/cost_model.h"
#include "algorithms/halving_doubling/rabenseifner.h"
#include "algorithms/halving_doubling/recursive_doubling.h"
#include "algorithms/hierarchical/hierarchical_allreduce.h"
#include "algorithms/ring/ring_algorithms.h"

namespace hostccl {
namespace {

CostParams fixedParams() {
    CostParams p = CostParams::defaults();
    std::string why;
    EXPECT_TRUE(applyCostConfig("shm=2us/4GBps tcp=30us/0.125GBps reduce=8GBps copy=8GBps", &p, &why)) << why;
    return p;
}

// `hosts` hosts of `perHost` ranks, numbered host by host; 8 cores each (no crowding).
CostModel model(uint32_t hosts, uint32_t perHost) {
    std::vector<uint32_t> nodeOf;
    for (uint32_t h = 0; h < hosts; ++h)
        for (uint32_t i = 0; i < perHost; ++i) nodeOf.push_back(h);
    return CostModel(fixedParams(), nodeOf, std::vector<uint32_t>(hosts, 8), false);
}

// Every link class is one row of transports/link_class.h: its name, its letter in
// the links matrix and its defaults all come from that row.
TEST(LinkClassTable, NamesAndLettersAreUniqueAndEachRowGivesItsDefaults) {
    std::set<std::string> names;
    std::set<char> letters;
    const CostParams d = CostParams::defaults();
    for (size_t c = 0; c < kLinkClasses; ++c) {
        const LinkClassInfo& info = linkClassInfo(LinkClass(c));
        EXPECT_TRUE(names.insert(info.name).second) << info.name;
        EXPECT_TRUE(letters.insert(info.letter).second) << info.letter;
        EXPECT_NE(info.letter, '.') << "'.' marks a rank's own cell";
        LinkClass back = LinkClass(kLinkClasses - 1 - c);
        EXPECT_TRUE(linkClassNamed(info.name, &back));
        EXPECT_EQ(size_t(back), c);
        EXPECT_DOUBLE_EQ(d.link[c].alpha, info.alpha);
        EXPECT_DOUBLE_EQ(d.link[c].beta, 1.0 / info.bytesPerSecond);
        EXPECT_STREQ(d.linkSource[c], "default");
    }
    EXPECT_EQ(names, (std::set<std::string>{"shm", "tcp", "rdma"}));
    EXPECT_FALSE(linkClassInfo(LinkClass::Shm).betweenHosts) << "a platform's network cannot be shared memory";
    LinkClass untouched = LinkClass::Rdma;
    EXPECT_FALSE(linkClassNamed("nvlink", &untouched));
    EXPECT_EQ(untouched, LinkClass::Rdma);
    // A class's name is also its key in HOSTCCL_COST_MODEL.
    for (size_t c = 0; c < kLinkClasses; ++c) {
        CostParams p = CostParams::defaults();
        std::string why;
        ASSERT_TRUE(applyCostConfig(std::string(linkClassName(LinkClass(c))) + "=7us/2GBps", &p, &why)) << why;
        EXPECT_DOUBLE_EQ(p.link[c].alpha, 7e-6);
        EXPECT_STREQ(p.linkSource[c], "config");
    }
}

TEST(CostConfig, ParsesEveryKindOfSetting) {
    CostParams p = fixedParams();
    EXPECT_DOUBLE_EQ(p.of(LinkClass::Shm).alpha, 2e-6);
    EXPECT_DOUBLE_EQ(p.of(LinkClass::Shm).beta, 1e-9 / 4);
    EXPECT_DOUBLE_EQ(p.of(LinkClass::Tcp).beta, 1e-9 / 0.125);
    EXPECT_DOUBLE_EQ(p.gamma, 1e-9 / 8);
    EXPECT_STREQ(p.linkSource[size_t(LinkClass::Tcp)], "config");
    EXPECT_STREQ(p.linkSource[size_t(LinkClass::Rdma)], "default");
    EXPECT_TRUE(fullyConfigured(p, true));
    EXPECT_DOUBLE_EQ(p.nicBeta, 0) << "a NIC's rate is unknown unless configured";
    CostParams partial = CostParams::defaults();
    std::string why;
    ASSERT_TRUE(applyCostConfig("tcp=10us/1GBps,reduce=2GBps nic=3.125GBps", &partial, &why)) << why;
    EXPECT_FALSE(fullyConfigured(partial, false));
    EXPECT_DOUBLE_EQ(partial.nicBeta, 1e-9 / 3.125);
    EXPECT_NE(partial.summary().find("nic 3.125GB/s"), std::string::npos) << partial.summary();
    ASSERT_TRUE(applyCostConfig("leaf=32/2", &partial, &why)) << why;
    EXPECT_EQ(partial.hostsPerLeaf, 32u);
    EXPECT_DOUBLE_EQ(partial.leafOversubscription, 2);
    EXPECT_NE(partial.summary().find("leaves of 32 hosts at 2:1"), std::string::npos) << partial.summary();
}

TEST(CostConfig, RejectsMalformedTextAndChangesNothing) {
    for (const char* bad : {"shm=2us", "shm=2ms/4GBps", "shm=-1us/4GBps", "tcp=1us/0GBps", "disk=1us/1GBps",
                            "reduce=4", "copy=fastGBps", "shm", "nic=3", "nic=0GBps", "leaf=32", "leaf=0/2",
                            "leaf=2.5/2", "leaf=32/0.5", "leaf=99999999999/1", "leaf=32/2x"}) {
        CostParams p = CostParams::defaults();
        std::string why;
        EXPECT_FALSE(applyCostConfig(bad, &p, &why)) << bad;
        EXPECT_NE(why.find('\''), std::string::npos) << "the reason quotes the bad part: " << why;
        EXPECT_DOUBLE_EQ(p.of(LinkClass::Shm).alpha, CostParams::defaults().of(LinkClass::Shm).alpha);
        EXPECT_STREQ(p.linkSource[0], "default");
        EXPECT_DOUBLE_EQ(p.nicBeta, 0);
        EXPECT_EQ(p.hostsPerLeaf, 0u);
    }
}

// Ring allreduce on one host of p ranks: 2(p-1) steps of alpha + n/p beta; the
// reduction happens as data arrives, so it adds nothing while it keeps up.
TEST(CostModel, RingMatchesTheTextbookFormula) {
    const CostModel m = model(1, 4);
    const Linear c = RingAllReduce().cost(m);
    EXPECT_DOUBLE_EQ(c.fixed, 6 * 2e-6);
    EXPECT_NEAR(c.perByte, 6.0 / 4 * 1e-9 / 4, 1e-18);
}

// Reducing on arrival: the slower of transfer and reduction sets a step's pace.
TEST(CostModel, ReductionOnArrivalOverlapsTheTransfer) {
    CostParams slowReduce = fixedParams();
    slowReduce.gamma = 1e-9;  // 1 GB/s, slower than the 4 GB/s link
    const CostModel m(slowReduce, {0, 0}, {8}, false);
    auto other = [](uint32_t r) { return r ^ 1u; };
    EXPECT_DOUBLE_EQ(m.reducingStep(other, 0.5).perByte, 0.5 * 1e-9);
    EXPECT_DOUBLE_EQ(model(1, 2).reducingStep(other, 0.5).perByte, 0.5 * 1e-9 / 4);
    EXPECT_DOUBLE_EQ(m.reducingStep([](uint32_t) { return CostModel::kNone; }, 1.0).perByte, 0.0);
}

// Recursive doubling with 8 ranks: lg 8 = 3 whole-vector exchanges, each reduced;
// with 6 ranks the fold adds a hand-over and a return of the whole vector.
TEST(CostModel, RecursiveDoublingCountsTheFold) {
    const Linear eight = RecursiveDoublingAllReduce().cost(model(1, 8));
    EXPECT_DOUBLE_EQ(eight.fixed, 3 * 2e-6);
    EXPECT_NEAR(eight.perByte, 3 * (1e-9 / 4 + 1e-9 / 8), 1e-18);
    const Linear six = RecursiveDoublingAllReduce().cost(model(1, 6));
    EXPECT_DOUBLE_EQ(six.fixed, (2 + 2) * 2e-6);
}

// Small vectors: recursive doubling's lg p start-ups beat the ring's 2(p-1); large
// ones: Rabenseifner and the ring move 2(p-1)/p of the vector, doubling lg p times it.
TEST(CostModel, LatencyAndBandwidthRegimesOrderTheAlgorithms) {
    const CostModel m = model(1, 8);
    const double small = 64, large = 64 << 20;
    EXPECT_LT(RecursiveDoublingAllReduce().cost(m).at(small), RingAllReduce().cost(m).at(small));
    EXPECT_LT(RecursiveDoublingAllReduce().cost(m).at(small), RabenseifnerAllReduce().cost(m).at(small));
    EXPECT_LT(RingAllReduce().cost(m).at(large), RecursiveDoublingAllReduce().cost(m).at(large));
    EXPECT_LT(RabenseifnerAllReduce().cost(m).at(large), RecursiveDoublingAllReduce().cost(m).at(large));
}

// Two hosts of four over a slow link: the flat ring pushes 2(p-1)/p = 1.75 vectors
// through each direction of the link, the hierarchical algorithm 2(N-1)/N = 1 (plus
// its in-host ring passes on a quarter of the vector each).
TEST(CostModel, HierarchicalCrossesTheSlowLinkLess) {
    const CostModel m = model(2, 4);
    const double tcpBeta = 1e-9 / 0.125, shmBeta = 1e-9 / 4;
    EXPECT_NEAR(RingAllReduce().cost(m).perByte, 1.75 * tcpBeta, 1e-18);
    EXPECT_NEAR(HierarchicalAllReduce().cost(m).perByte, 1.0 * tcpBeta + 2 * 3 * shmBeta / 4, 1e-18);
    EXPECT_LT(HierarchicalAllReduce().cost(m).at(64 << 20), RingAllReduce().cost(m).at(64 << 20));
}

// A ring's ranks go on as soon as their predecessor's block arrives: on two hosts of
// four, 6 of the 8 hops are shared memory (2 us) and 2 cross (30 us), so each of the
// 2 x 7 steps costs their mean, 9 us, not the network's 30 us; the bytes still move
// at the slow link's pace.
TEST(CostModel, RingStartUpsAddUpAroundTheRing) {
    const Linear ring = RingAllReduce().cost(model(2, 4));
    EXPECT_NEAR(ring.fixed, 14 * (6 * 2e-6 + 2 * 30e-6) / 8, 1e-12);
    EXPECT_NEAR(ring.perByte, 1.75 * 1e-9 / 0.125, 1e-18);
    const Linear halving = RabenseifnerAllReduce().cost(model(2, 4));
    EXPECT_DOUBLE_EQ(halving.fixed, 2 * (2 * 2e-6 + 30e-6)) << "halving-doubling waits for its slowest pair at every step";
}

// Hosts joined by RDMA (only RDMA links measured or given): steps between hosts cost
// RDMA's numbers, not TCP's defaults; with TCP known too, TCP's.
TEST(CostModel, StepsBetweenHostsUseTheLinksTheyHave) {
    CostParams p = CostParams::defaults();
    std::string why;
    ASSERT_TRUE(applyCostConfig("shm=1us/8GBps rdma=4us/11GBps", &p, &why)) << why;
    auto across = [](uint32_t r) { return r ^ 1u; };
    const Linear rdma = CostModel(p, {0, 1}, {8, 8}, false).step(across, 1.0);
    EXPECT_DOUBLE_EQ(rdma.fixed, 4e-6);
    EXPECT_DOUBLE_EQ(rdma.perByte, 1e-9 / 11);
    ASSERT_TRUE(applyCostConfig("tcp=30us/1GBps", &p, &why)) << why;
    EXPECT_DOUBLE_EQ(CostModel(p, {0, 1}, {8, 8}, false).step(across, 1.0).fixed, 30e-6);
}

// Ranks interleaved over the hosts: every ring hop crosses, four per host share its link.
TEST(CostModel, RanksSharingAHostLinkDivideItsBandwidth) {
    const CostModel m(fixedParams(), {0, 1, 0, 1, 0, 1, 0, 1}, {8, 8}, false);
    const Linear one = m.step([](uint32_t r) { return (r + 1) % 8; }, 1.0);
    EXPECT_DOUBLE_EQ(one.perByte, 4 * 1e-9 / 0.125);
    EXPECT_DOUBLE_EQ(one.fixed, 30e-6);
}

// A flow slower than the host's NIC (one TCP stream on a fast link): four flows
// crossing at once share the NIC's rate, not one flow's.
TEST(CostModel, FlowsSlowerThanTheNicShareTheNicsRate) {
    CostParams p = fixedParams();  // one flow: 0.125 GB/s
    p.nicBeta = 1e-9 / 0.25;
    const CostModel m(p, {0, 1, 0, 1, 0, 1, 0, 1}, {8, 8}, false);
    auto nextRank = [](uint32_t r) { return (r + 1) % 8; };
    EXPECT_DOUBLE_EQ(m.step(nextRank, 1.0).perByte, 4 * 1e-9 / 0.25);
    p.nicBeta = 1e-9 / 1;  // the NIC carries 8 flows' worth: each flow runs at its own rate
    EXPECT_DOUBLE_EQ(CostModel(p, {0, 1, 0, 1, 0, 1, 0, 1}, {8, 8}, false).step(nextRank, 1.0).perByte, 1e-9 / 0.125);
}

// 4 hosts of 2 ranks under leaves of 2 hosts: every rank crossing to the other leaf
// at once (rank r to r ^ 4) puts 4 flows through each uplink of 2 NICs' rate: at 1:1
// no tighter than the NICs, at 2:1 half of it. A step inside the leaves never pays.
TEST(CostModel, FlowsBetweenLeavesShareTheUplink) {
    CostParams p = fixedParams();  // one flow: 0.125 GB/s
    p.nicBeta = 1e-9 / 0.25;       // each NIC carries 2 flows at their own rate
    const std::vector<uint32_t> nodeOf = {0, 0, 1, 1, 2, 2, 3, 3};
    auto otherLeaf = [](uint32_t r) { return r ^ 4; };
    auto sameLeaf = [](uint32_t r) { return r ^ 2; };
    const double alone = CostModel(p, nodeOf, {2, 2, 2, 2}, false).step(otherLeaf, 1.0).perByte;
    EXPECT_DOUBLE_EQ(alone, 1e-9 / 0.125);
    p.hostsPerLeaf = 2;
    EXPECT_DOUBLE_EQ(CostModel(p, nodeOf, {2, 2, 2, 2}, false).step(otherLeaf, 1.0).perByte, alone) << "1:1";
    p.leafOversubscription = 2;
    const CostModel m(p, nodeOf, {2, 2, 2, 2}, false);
    EXPECT_DOUBLE_EQ(m.step(otherLeaf, 1.0).perByte, 4 * 1e-9 / 0.25 * 2 / 2) << "4 flows through half of 2 NICs";
    EXPECT_DOUBLE_EQ(m.step(sameLeaf, 1.0).perByte, alone);
}

// 512 hosts of 8 ranks whose single TCP flows reach half of the NIC (the simulator's
// 25 GbE platform): at 1 GiB the flat ring crosses each NIC with one flow, 2 GiB at
// the flow's 1.5 GB/s; hierarchical with all 8 ranks at once, at the NIC's 3.125
// GB/s. The selector once picked the ring there (simulated: 1431 ms against 925 ms).
TEST(CostModel, HierarchicalFillsANicThatOneFlowCannot) {
    CostParams p = CostParams::defaults();
    std::string why;
    ASSERT_TRUE(applyCostConfig("shm=1us/30GBps tcp=20us/1.5GBps reduce=25GBps copy=60GBps nic=3.125GBps", &p, &why))
        << why;
    std::vector<uint32_t> nodeOf;
    for (uint32_t r = 0; r < 4096; ++r) nodeOf.push_back(r / 8);
    const CostModel m(p, nodeOf, std::vector<uint32_t>(512, 16), false);
    const double gib = double(1ull << 30);
    const double meanAlpha = (7 * 1e-6 + 20e-6) / 8;  // 7 hops of 8 inside a host
    EXPECT_NEAR(RingAllReduce().cost(m).at(gib), 2 * 4095 * (meanAlpha + gib / 4096 / 1.5e9), 1e-3);
    EXPECT_LT(HierarchicalAllReduce().cost(m).at(gib), 0.8 * RingAllReduce().cost(m).at(gib));
}

// More ranks than cores: the probe measured with every rank busy, so a step that
// keeps only half of them busy is cheaper per byte.
TEST(CostModel, CrowdedHostsScaleWithTheBusyRanks) {
    const CostModel m(fixedParams(), std::vector<uint32_t>(8, 0), {2}, false);
    const Linear all = m.step([](uint32_t r) { return r ^ 1u; }, 1.0);
    const Linear half = m.step([](uint32_t r) { return r < 4 ? r ^ 1u : CostModel::kNone; }, 1.0);
    EXPECT_DOUBLE_EQ(all.perByte, 1e-9 / 4);
    EXPECT_DOUBLE_EQ(half.perByte, 0.5 * 1e-9 / 4);
    EXPECT_DOUBLE_EQ(m.reduce(1.0).perByte, 4 * 1e-9 / 8);
}

// The probe's median start-up applies when ranks outnumber cores (every step waits
// for the scheduler), its lower quartile otherwise.
TEST(CostModel, CrowdedHostsUseTheBusyStartUp) {
    CostParams p = fixedParams();
    p.of(LinkClass::Shm).alphaBusy = 9e-6;
    const CostModel roomy(p, std::vector<uint32_t>(4, 0), {4}, false);
    const CostModel crowded(p, std::vector<uint32_t>(4, 0), {2}, false);
    auto ring = [](uint32_t r) { return (r + 1) % 4; };
    EXPECT_DOUBLE_EQ(roomy.step(ring, 1.0).fixed, 2e-6);
    EXPECT_DOUBLE_EQ(crowded.step(ring, 1.0).fixed, 9e-6);
}

}  // namespace
}  // namespace hostccl
