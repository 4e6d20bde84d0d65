// Every collective at hundreds of ranks as threads of one process (small counts,
// int32, exact results), with links opened on demand: what a rank holds must grow
// with the peers its algorithms use, not with the communicator (the all-to-alls meet
// on the process board: no link per pair). The rank count comes
// from HOSTCCL_SCALE_RANKS (CI runs 256; 1024 is the scale benchmark's).
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>

#include "hccl/hccl.h"
#include "hostccl/hostccl.h"
#include "tests/support/matrix.h"
#include "tests/support/world.h"

using namespace hostccl::test;

namespace {

uint32_t scaleRanks() {
    const char* v = std::getenv("HOSTCCL_SCALE_RANKS");
    return v != nullptr ? static_cast<uint32_t>(std::strtoul(v, nullptr, 10)) : 256;
}

World& world() {
    static World* w = [] {
        // Every rank is a device here.
        setenv("HOSTCCL_DEVICE_COUNT", std::to_string(scaleRanks()).c_str(), 1);
        auto t0 = std::chrono::steady_clock::now();
        auto* made = new World(scaleRanks());
        std::printf("created %u thread ranks in %.2f s\n", scaleRanks(),
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        return made;
    }();
    return *w;
}

class Scale : public ::testing::TestWithParam<std::string> {};

TEST_P(Scale, ExactResultsOnEveryRank) {
    const std::string family = GetParam();
    World& w = world();
    const uint32_t n = w.size();
    ASSERT_TRUE(w.ok()) << "HcclCommInitAll failed: " << w.initResult();
    int cases = 0;
    for (const MatrixCase& c : matrixCases(family, n, false)) {
        if (c.dtype != -1 && c.dtype != HCCL_DATA_TYPE_INT32) continue;  // one type: the scale is the point
        // A product of hundreds of ranks' values leaves every integer type's range.
        if (c.name.find(" prod ") != std::string::npos) continue;
        std::vector<std::string> errors(n);
        w.run([&](uint32_t r) {
            errors[r] = c.run(RankContext{r, n, w.comm(r), w.stream(r)});
            return 0;
        });
        for (uint32_t r = 0; r < n; ++r) ASSERT_EQ(errors[r], "") << c.name << " on rank " << r << " of " << n;
        ++cases;
    }
    EXPECT_GT(cases, 0);
    std::printf("%s: %d cases exact on all %u ranks\n", family.c_str(), cases, n);
}

INSTANTIATE_TEST_SUITE_P(Threads, Scale, ::testing::ValuesIn(matrixFamilies()),
                         [](const auto& info) { return info.param; });

// What an allreduce-only job holds per rank: links to its ring neighbours and
// doubling partners, not to everyone. Rank 0's links are counted after the
// allreduces above ran (the suite runs in order; this runs first when alone).
TEST(ScaleResources, AllreduceJobOpensFewLinks) {
    World& w = world();
    ASSERT_TRUE(w.ok());
    const uint32_t n = w.size();
    std::vector<int32_t> buf(n);
    w.run([&](uint32_t r) {
        std::vector<int32_t> in(4, int32_t(r)), out(4);
        if (HcclAllReduce(in.data(), out.data(), 4, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, w.comm(r), w.stream(r)) !=
                HCCL_SUCCESS ||
            aclrtSynchronizeStream(w.stream(r)) != 0)
            return 1;
        buf[r] = out[0];
        return 0;
    });
    for (uint32_t r = 0; r < n; ++r) ASSERT_EQ(buf[r], int32_t(n * (n - 1) / 2)) << "rank " << r;
    char text[1 << 16];
    ASSERT_EQ(HostcclCommDescribe(w.comm(0), text, sizeof text), HCCL_SUCCESS);
    const std::string d(text);
    const auto at = d.find("this rank has connected ");
    ASSERT_NE(at, std::string::npos) << d.substr(0, 2000);
    const int connected = std::atoi(d.c_str() + at + std::strlen("this rank has connected "));
    std::printf("rank 0 of %u holds %d links\n", n, connected);
    EXPECT_LE(connected, 32) << "an allreduce needs O(log n) peers";
}

}  // namespace
