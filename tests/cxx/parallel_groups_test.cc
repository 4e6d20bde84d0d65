// ParallelGroups: the dp x tp x pp layout, each group's communicator, pipeline
// send/recv, and bad degrees. Ranks are threads (one host); placement across hosts
// is checked by parallel_placement_test with processes on emulated hosts.
#include <gtest/gtest.h>

#include "on_ranks.h"
#include "hostccl/parallel.hpp"

using hostccl::Communicator;
using hostccl::ParallelGroups;
using hostccl::test::onRanks;

namespace {
// Sum of the world ranks of a group, reduced over the group itself.
int32_t groupSum(Communicator& group, uint32_t worldRank) {
    int32_t v = int32_t(worldRank);
    group.allReduce(std::span<int32_t>(&v, 1)).wait();
    return v;
}
int32_t sum(const std::vector<uint32_t>& v) {
    int32_t s = 0;
    for (uint32_t x : v) s += int32_t(x);
    return s;
}
}  // namespace

TEST(ParallelGroups, TensorFastestLayout) {
    onRanks(8, [](uint32_t r, Communicator& world) {
        ParallelGroups g(world, 2, 2, 2);
        // slot = rank on one host: tp = r % 2, dp = (r / 2) % 2, pp = r / 4.
        EXPECT_EQ(g.tensorParallelRank(), r % 2);
        EXPECT_EQ(g.dataParallelRank(), (r / 2) % 2);
        EXPECT_EQ(g.pipelineStage(), r / 4);
        EXPECT_TRUE(g.tensorParallelWithinHost());
        uint32_t base = r - r % 2;
        EXPECT_EQ(g.tensorParallelMembers(), (std::vector<uint32_t>{base, base + 1}));
        uint32_t dpBase = (r / 4) * 4 + r % 2;
        EXPECT_EQ(g.dataParallelMembers(), (std::vector<uint32_t>{dpBase, dpBase + 2}));
        EXPECT_EQ(g.pipelineMembers(), (std::vector<uint32_t>{r % 4, r % 4 + 4}));
        EXPECT_EQ(g.tensorParallel().rank(), g.tensorParallelRank());
        EXPECT_EQ(g.dataParallel().size(), 2u);
        // Every group's communicator reaches exactly its members.
        EXPECT_EQ(groupSum(g.tensorParallel(), r), sum(g.tensorParallelMembers()));
        EXPECT_EQ(groupSum(g.dataParallel(), r), sum(g.dataParallelMembers()));
        EXPECT_EQ(groupSum(g.pipelineParallel(), r), sum(g.pipelineMembers()));
    });
}

TEST(ParallelGroups, PipelineStagesPassActivationsAndGradients) {
    onRanks(6, [](uint32_t, Communicator& world) {
        ParallelGroups g(world, 1, 2, 3);  // three stages of a two-way tensor-parallel model
        std::vector<float> act(32), grad(32);
        if (!g.isFirstStage()) g.recvFromPreviousStage(act.data(), act.size(), HCCL_DATA_TYPE_FP32).wait();
        else std::fill(act.begin(), act.end(), float(g.tensorParallelRank()));
        for (float& x : act) x += 1.0f;  // each stage adds one
        if (!g.isLastStage()) g.sendToNextStage(act.data(), act.size(), HCCL_DATA_TYPE_FP32).wait();
        else EXPECT_EQ(act, std::vector<float>(32, float(g.tensorParallelRank() + 3)));
        // Gradients flow back from the last stage.
        if (!g.isLastStage()) g.recvFromNextStage(grad.data(), grad.size(), HCCL_DATA_TYPE_FP32).wait();
        else std::fill(grad.begin(), grad.end(), 100.0f);
        for (float& x : grad) x *= 0.5f;
        if (!g.isFirstStage()) g.sendToPreviousStage(grad.data(), grad.size(), HCCL_DATA_TYPE_FP32).wait();
        else EXPECT_EQ(grad, std::vector<float>(32, 12.5f));
        if (g.isFirstStage()) {
            EXPECT_THROW(g.recvFromPreviousStage(grad.data(), 1, HCCL_DATA_TYPE_FP32), hostccl::Error);
        }
        if (g.isLastStage()) {
            EXPECT_THROW(g.sendToNextStage(grad.data(), 1, HCCL_DATA_TYPE_FP32), hostccl::Error);
        }
    });
}

TEST(ParallelGroups, RejectsDegreesThatDoNotMultiplyToTheWorld) {
    onRanks(4, [](uint32_t, Communicator& world) {
        for (auto [dp, tp, pp] : {std::tuple{2u, 2u, 2u}, {3u, 1u, 1u}, {0u, 4u, 1u}}) {
            try {
                ParallelGroups g(world, dp, tp, pp);
                ADD_FAILURE() << dp << "x" << tp << "x" << pp << " accepted on 4 ranks";
            } catch (const hostccl::Error& e) {
                EXPECT_EQ(e.code(), HCCL_E_PARA);
            }
        }
        ParallelGroups g(world, 4, 1, 1);  // nothing was changed: a valid layout still builds
        EXPECT_EQ(g.dataParallel().size(), 4u);
    });
}
