// The collective matrix with ranks as threads of this process (HcclCommInitAll):
// every family x rank count, each case run on all ranks at once.
#include <gtest/gtest.h>

#include <map>
#include <memory>

#include "tests/support/matrix.h"
#include "tests/support/world.h"

using namespace hostccl::test;

namespace {

// One World per rank count, shared by the families (init is the slow part).
World& world(uint32_t n) {
    static auto* worlds = new std::map<uint32_t, std::unique_ptr<World>>;
    auto& w = (*worlds)[n];
    if (!w) w = std::make_unique<World>(n);
    return *w;
}

using Param = std::tuple<std::string, uint32_t>;

class Matrix : public ::testing::TestWithParam<Param> {};

TEST_P(Matrix, ExactResultsOnEveryRank) {
    const std::string family = std::get<0>(GetParam());
    const uint32_t n = std::get<1>(GetParam());
    World& w = world(n);
    ASSERT_TRUE(w.ok()) << "HcclCommInitAll failed: " << w.initResult();
    for (const MatrixCase& c : matrixCases(family, n)) {
        std::vector<std::string> errors(n);
        w.run([&](uint32_t r) {
            errors[r] = c.run(RankContext{r, n, w.comm(r), w.stream(r)});
            return 0;
        });
        for (uint32_t r = 0; r < n; ++r) ASSERT_EQ(errors[r], "") << c.name << " on rank " << r << " of " << n;
    }
}

INSTANTIATE_TEST_SUITE_P(Threads, Matrix,
                         ::testing::Combine(::testing::ValuesIn(matrixFamilies()),
                                            ::testing::Values(1u, 2u, 3u, 4u, 5u, 8u)),
                         [](const auto& info) {
                             return std::get<0>(info.param) + "_" + std::to_string(std::get<1>(info.param)) + "ranks";
                         });

}  // namespace
