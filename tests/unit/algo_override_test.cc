// HCCL_ALGO / hcclAlgo parsing (algorithms/algo_override.h): HCCL's global and
// per-operator forms, and a clear error for everything else.
#include <gtest/gtest.h>

#include "algorithms/algo_override.h"

using namespace hostccl;

namespace {
AlgoOverride parsed(const std::string& text) {
    AlgoOverride o;
    std::string why;
    EXPECT_TRUE(parseAlgoOverride(text, &o, &why)) << text << ": " << why;
    return o;
}
std::string rejection(const std::string& text) {
    AlgoOverride o;
    std::string why;
    EXPECT_FALSE(parseAlgoOverride(text, &o, &why)) << text << " was accepted";
    return why;
}
}  // namespace

TEST(AlgoOverride, EmptyMeansAdaptiveEverywhere) {
    AlgoOverride o = parsed("");
    for (AlgoFamily f : o.family) EXPECT_EQ(f, AlgoFamily::Auto);
}

TEST(AlgoOverride, GlobalFormAppliesToEveryOperator) {
    AlgoOverride o = parsed("level0:NA;level1:H-D_R;level2:ring");
    for (AlgoFamily f : o.family) EXPECT_EQ(f, AlgoFamily::HalvingDoubling);
    EXPECT_EQ(parsed("level1:ring").forOp(AlgoOp::AllGather), AlgoFamily::Ring);  // level0 may be left out
    EXPECT_EQ(parsed("level0:NA;level1:NB").forOp(AlgoOp::AlltoAll), AlgoFamily::Bruck);
    EXPECT_EQ(parsed("level0:NA;level1:fullmesh").forOp(AlgoOp::Reduce), AlgoFamily::Direct);
    for (const char* h : {"NHR", "NHR_V1", "AHC", "AHC_BROKE", "pipeline", "hierarchical"})
        EXPECT_EQ(parsed(std::string("level0:NA;level1:") + h).forOp(AlgoOp::AllReduce), AlgoFamily::Hierarchical) << h;
    EXPECT_EQ(parsed("level0:NA;level1:null").forOp(AlgoOp::AllReduce), AlgoFamily::Auto);
}

TEST(AlgoOverride, PerOperatorFormSetsOnlyTheNamedOperators) {
    AlgoOverride o = parsed("allreduce=level0:NA;level1:ring/alltoall=level0:NA;level1:pairwise");
    EXPECT_EQ(o.forOp(AlgoOp::AllReduce), AlgoFamily::Ring);
    EXPECT_EQ(o.forOp(AlgoOp::AlltoAll), AlgoFamily::Pairwise);
    EXPECT_EQ(o.forOp(AlgoOp::AllGather), AlgoFamily::Auto);
    EXPECT_EQ(o.forOp(AlgoOp::None), AlgoFamily::Auto);
    EXPECT_EQ(algoOpOf(CollType::ReduceScatterV), AlgoOp::ReduceScatter);
    EXPECT_EQ(algoOpOf(CollType::AlltoAllVC), AlgoOp::AlltoAll);
    EXPECT_EQ(algoOpOf(CollType::Barrier), AlgoOp::None);
}

TEST(AlgoOverride, InvalidTextIsRejectedWithTheReason) {
    EXPECT_NE(rejection("level0:NA;level1:warp").find("unknown algorithm 'warp'"), std::string::npos);
    EXPECT_NE(rejection("level0:ring;level1:ring").find("level0 must be NA"), std::string::npos);
    EXPECT_NE(rejection("level0:NA").find("no level1"), std::string::npos);
    EXPECT_NE(rejection("level1:ring;level1:H-D_R").find("twice"), std::string::npos);
    EXPECT_NE(rejection("level3:ring").find("levelN"), std::string::npos);
    EXPECT_NE(rejection("ring").find("levelN"), std::string::npos);
    EXPECT_NE(rejection("allreduc=level1:ring").find("operator"), std::string::npos);
    EXPECT_NE(rejection("allreduce=level1:ring/allreduce=level1:H-D_R").find("twice"), std::string::npos);
    EXPECT_NE(rejection("allreduce=level1:ring/").find("operator"), std::string::npos);
    EXPECT_NE(rejection("level0:NA;;level1:ring").find("levelN"), std::string::npos);
    EXPECT_NE(rejection("level1:h-d_r").find("unknown"), std::string::npos);  // names are case-sensitive
}
