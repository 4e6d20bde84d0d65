// Every algorithm HCCL_ALGO can force, on every collective it serves, for rank
// counts 1 to 8 and, where it changes the algorithm's shape, 16 (threads of this
// process; 9, a power of two plus one, would fold as 5 does), with one element type
// per size (kOneTypePerSize) and every reduce op: exact results, including counts
// smaller than the rank count (the matrix's counts 0, 1 and 7), and the
// multi-megabyte count at 2, 3, 4 and 8 ranks. The
// hierarchical algorithm also runs over emulated hosts (HOSTCCL_HOST_ID gives the
// rank on device d entry d mod 8): 2x4, 4x2 and 3+2+3 at 8 ranks, and the uneven,
// interleaved layouts the same lists give at the other rank counts. Every flat
// algorithm runs over 3+2+3 emulated hosts too (8 ranks), where one step mixes shared
// memory and TCP links.
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "hostccl/hostccl.h"
#include "tests/support/matrix.h"
#include "tests/support/world.h"

using namespace hostccl::test;

namespace {

struct Forced {
    const char* label;
    const char* hcclAlgo;  // HCCL_ALGO for the communicator
    const char* algorithm;  // the name the selector gives it
    std::vector<std::string> families;
    const char* hostIds = "";  // HOSTCCL_HOST_ID ("" = one host)
};

const std::vector<std::string> kHierarchical = {"AllReduce",      "AllGather",      "AllGatherV",
                                                 "ReduceScatter",  "ReduceScatterV", "Broadcast"};

const char* const k323 = "a,a,a,b,b,c,c,c";
constexpr size_t kEveryRankCount = 11;  // entries [0, 11) run at every rank count; the rest at 8

const std::vector<Forced>& forcedAlgorithms() {
    static const std::vector<Forced> f = {
        {"ring", "level0:NA;level1:ring", "ring",
         {"AllReduce", "AllGather", "AllGatherV", "ReduceScatter", "ReduceScatterV"}},
        {"halving_doubling", "level0:NA;level1:H-D_R", "halving-doubling",
         {"AllReduce", "AllGather", "AllGatherV", "ReduceScatter", "ReduceScatterV", "Broadcast", "Reduce"}},
        {"direct", "level0:NA;level1:fullmesh", "direct",
         {"AllReduce", "AllGather", "AllGatherV", "ReduceScatter", "ReduceScatterV", "Broadcast", "Reduce",
          "AlltoAll", "AlltoAllV", "AlltoAllVC"}},
        {"pairwise", "alltoall=level0:NA;level1:pairwise", "pairwise", {"AlltoAll", "AlltoAllV", "AlltoAllVC"}},
        {"bruck", "level0:NA;level1:NB", "bruck", {"AllGather", "AlltoAll"}},
        {"hierarchical", "level0:NA;level1:NHR", "hierarchical", kHierarchical},
        {"hierarchical_2x4", "level0:NA;level1:NHR", "hierarchical", kHierarchical, "a,a,a,a,b,b,b,b"},
        {"hierarchical_4x2", "level0:NA;level1:NHR", "hierarchical", kHierarchical, "a,a,b,b,c,c,d,d"},
        {"hierarchical_3_2_3", "level0:NA;level1:NHR", "hierarchical", kHierarchical, "a,a,a,b,b,c,c,c"},
        {"recursive_doubling", "allreduce=level0:NA;level1:recursive-doubling", "recursive-doubling", {"AllReduce"}},
        {"binomial", "level0:NA;level1:binomial", "binomial", {"Broadcast", "Reduce"}},
        // The flat algorithms over 3+2+3 emulated hosts (shared memory and TCP links
        // mixed in one step), at 8 ranks only (the second instantiation below).
        {"ring_3_2_3", "level0:NA;level1:ring", "ring", {"AllReduce", "AllGatherV", "ReduceScatterV"}, k323},
        {"halving_doubling_3_2_3", "level0:NA;level1:H-D_R", "halving-doubling",
         {"AllReduce", "AllGather", "ReduceScatter", "Broadcast", "Reduce"}, k323},
        {"bruck_3_2_3", "level0:NA;level1:NB", "bruck", {"AllGather", "AlltoAll"}, k323},
        {"pairwise_3_2_3", "alltoall=level0:NA;level1:pairwise", "pairwise", {"AlltoAllV"}, k323},
        {"recursive_doubling_3_2_3", "allreduce=level0:NA;level1:recursive-doubling", "recursive-doubling",
         {"AllReduce"}, k323},
        {"binomial_3_2_3", "level0:NA;level1:binomial", "binomial", {"Broadcast", "Reduce"}, k323},
        // Ranks outnumbering the cores only (the third instantiation below); the barrier
        // takes it by itself there.
        {"core_leaders", "level0:NA;level1:core-leaders", "core-leaders",
         {"AllReduce", "AllGather", "ReduceScatter", "AlltoAll", "Barrier"}},
    };
    return f;
}

using Param = std::tuple<size_t, uint32_t>;  // index into forcedAlgorithms(), ranks
class ForcedAlgorithm : public ::testing::TestWithParam<Param> {};

TEST_P(ForcedAlgorithm, ExactResultsOnEveryRank) {
    const size_t index = std::get<0>(GetParam());
    const uint32_t n = std::get<1>(GetParam());
    const Forced& f = forcedAlgorithms()[index];
    const uint32_t cores = std::thread::hardware_concurrency();
    if (std::string(f.label) == "core_leaders" && n <= cores)
        GTEST_SKIP() << "core-leaders needs more ranks than the machine's " << cores << " cores; " << n
                     << " do not crowd it";
    // Each ctest entry is its own process, so the variable reaches only this world.
    ASSERT_EQ(setenv("HCCL_ALGO", f.hcclAlgo, 1), 0);
    if (*f.hostIds != '\0') {
        ASSERT_EQ(setenv("HOSTCCL_HOST_ID", f.hostIds, 1), 0);
    }
    World w(n);
    unsetenv("HCCL_ALGO");
    unsetenv("HOSTCCL_HOST_ID");
    ASSERT_TRUE(w.ok()) << "HcclCommInitAll failed: " << w.initResult();
    // Exact results alone would pass if the override were ignored: the selector must
    // name the forced algorithm (direct needs more than one rank sharing the host).
    if (std::string(f.algorithm) != "direct" || n > 1) {
        std::vector<char> text(1 << 16);
        ASSERT_EQ(HostcclCommDescribe(w.comm(0), text.data(), text.size()), HCCL_SUCCESS);
        std::istringstream words(text.data());
        std::string word;
        bool chosen = false;
        while (words >> word) chosen = chosen || word == f.algorithm;
        EXPECT_TRUE(chosen) << f.label << " is not chosen:\n" << text.data();
    }
    // What a rank count adds is its shape (folds, uneven blocks), not the size: the
    // multi-megabyte case (several pipeline chunks) runs at 2, 3, 4 and 8 ranks, which
    // give every algorithm its power-of-two and folded paths.
    const bool withLarge = n == 2 || n == 3 || n == 4 || n == 8;
    for (const std::string& family : f.families) {
        for (const MatrixCase& c : matrixCases(family, n, withLarge)) {
            if (!caseInTypes(c, kOneTypePerSize)) continue;
            std::vector<std::string> errors(n);
            w.run([&](uint32_t r) {
                errors[r] = c.run(RankContext{r, n, w.comm(r), w.stream(r)});
                return 0;
            });
            for (uint32_t r = 0; r < n; ++r)
                ASSERT_EQ(errors[r], "") << f.label << ": " << c.name << " on rank " << r << " of " << n;
        }
    }
}

std::string testName(const ::testing::TestParamInfo<Param>& info) {
    return std::string(forcedAlgorithms()[std::get<0>(info.param)].label) + "_" +
           std::to_string(std::get<1>(info.param)) + "ranks";
}

// At 16 ranks, the algorithms whose shape 16 changes: hierarchical (8 ranks a host in
// the 2x4 layout, 6+4+6 in the 3+2+3 one), the binomial tree, recursive doubling,
// Bruck's and pairwise steps. The ring, halving-doubling (a power of two, one more
// round than at 8) and direct (every pair) do the same at 16 as at 8.
std::vector<size_t> entriesAtSixteen() {
    std::vector<size_t> out;
    for (size_t i = 0; i < kEveryRankCount; ++i) {
        const std::string label = forcedAlgorithms()[i].label;
        if (label != "ring" && label != "halving_doubling" && label != "direct") out.push_back(i);
    }
    return out;
}

INSTANTIATE_TEST_SUITE_P(Threads, ForcedAlgorithm,
                         ::testing::Combine(::testing::Range<size_t>(0, kEveryRankCount),
                                            ::testing::Values(1u, 2u, 3u, 4u, 5u, 6u, 7u, 8u)),
                         testName);
// Core leaders: 3 to 8 and 16 ranks (more than the 2-core test machine's cores).
INSTANTIATE_TEST_SUITE_P(Crowded, ForcedAlgorithm,
                         ::testing::Combine(::testing::Values(forcedAlgorithms().size() - 1),
                                            ::testing::Values(3u, 4u, 5u, 6u, 7u, 8u, 16u)),
                         testName);
INSTANTIATE_TEST_SUITE_P(Threads16, ForcedAlgorithm,
                         ::testing::Combine(::testing::ValuesIn(entriesAtSixteen()), ::testing::Values(16u)), testName);
INSTANTIATE_TEST_SUITE_P(EmulatedHosts, ForcedAlgorithm,
                         ::testing::Combine(::testing::Range<size_t>(kEveryRankCount, forcedAlgorithms().size() - 1),
                                            ::testing::Values(8u)),
                         testName);

}  // namespace
