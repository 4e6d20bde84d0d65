// The collective matrix with ranks as threads of this process (HcclCommInitAll):
// every family x rank count, each case run on all ranks at once.
#include <gtest/gtest.h>

#include <cstdlib>
#include <map>
#include <string>
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

// The TCP and direct variants (tests/CMakeLists.txt) pass --matrix-types=one-per-size;
// the sanitizer runs (scripts/sanitize.sh) set HOSTCCL_TEST_MATRIX_TYPES=one-per-size.
bool oneTypePerSize() {
    const char* env = std::getenv("HOSTCCL_TEST_MATRIX_TYPES");
    if (env != nullptr && std::string(env) == "one-per-size") return true;
    for (const std::string& arg : ::testing::internal::GetArgvs())
        if (arg == "--matrix-types=one-per-size") return true;
    return false;
}

using Param = std::tuple<std::string, uint32_t>;

class Matrix : public ::testing::TestWithParam<Param> {};

TEST_P(Matrix, ExactResultsOnEveryRank) {
    const std::string family = std::get<0>(GetParam());
    const uint32_t n = std::get<1>(GetParam());
    World& w = world(n);
    ASSERT_TRUE(w.ok()) << "HcclCommInitAll failed: " << w.initResult();
    const std::string types = oneTypePerSize() ? kOneTypePerSize : "";
    for (const MatrixCase& c : matrixCases(family, n)) {
        if (!caseInTypes(c, types)) continue;
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
