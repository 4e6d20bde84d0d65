// Every rank of a collective must choose the same algorithm, or the ranks wait for
// each other in different places until the exec timeout. HcclAlltoAllV's counts are
// each rank's own: ranks whose sizes straddle the model's crossover, or whose own
// blocks happen to be equal while another rank's are not, must still choose alike; a
// V gather's displacements are each rank's own too.
// HCCL_EXEC_TIMEOUT bounds every case, so a disagreement fails here instead of hanging.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/support/world.h"

using namespace hostccl::test;

namespace {

// A fixed model (no probe): with it, a 2-rank all-to-all of 8 B is pairwise's and one
// of 2 MiB is direct's (HOSTCCL_ALGO_EXPLAIN=1 shows the table).
constexpr const char* kModel = "shm=2us/4GBps reduce=8GBps copy=8GBps";

// The value rank `src` sends rank `dst` at position i of their block.
int32_t valueOf(uint32_t src, uint32_t dst, uint64_t i) { return int32_t(src * 1000003u + dst * 7919u + i); }

// matrix[s][d]: elements rank s sends rank d. Runs HcclAlltoAllV on every rank and
// returns, per rank, "" or the first wrong element / failed call.
std::vector<std::string> alltoallvOnEveryRank(World& w, const std::vector<std::vector<uint64_t>>& matrix) {
    const uint32_t n = w.size();
    std::vector<std::string> errors(n);
    w.run([&](uint32_t r) {
        std::vector<uint64_t> sc(n), sd(n), rc(n), rd(n);
        uint64_t sTotal = 0, rTotal = 0;
        for (uint32_t p = 0; p < n; ++p) {
            sc[p] = matrix[r][p];
            rc[p] = matrix[p][r];
            sd[p] = sTotal;
            rd[p] = rTotal;
            sTotal += sc[p];
            rTotal += rc[p];
        }
        std::vector<int32_t> send(sTotal), recv(rTotal, -1);
        for (uint32_t p = 0; p < n; ++p)
            for (uint64_t i = 0; i < sc[p]; ++i) send[sd[p] + i] = valueOf(r, p, i);
        HcclResult rc1 = HcclAlltoAllV(send.data(), sc.data(), sd.data(), HCCL_DATA_TYPE_INT32, recv.data(), rc.data(),
                                       rd.data(), HCCL_DATA_TYPE_INT32, w.comm(r), w.stream(r));
        if (rc1 != HCCL_SUCCESS) {
            errors[r] = "HcclAlltoAllV returned " + std::to_string(rc1);
            return 0;
        }
        if (aclrtSynchronizeStream(w.stream(r)) != ACL_SUCCESS) {
            errors[r] = "the all-to-all-v failed on the stream (ranks chose different algorithms?)";
            return 0;
        }
        for (uint32_t p = 0; p < n && errors[r].empty(); ++p)
            for (uint64_t i = 0; i < rc[p]; ++i)
                if (recv[rd[p] + i] != valueOf(p, r, i)) {
                    errors[r] = "from rank " + std::to_string(p) + " element " + std::to_string(i) + ": got " +
                                std::to_string(recv[rd[p] + i]) + ", want " + std::to_string(valueOf(p, r, i));
                    break;
                }
        return 0;
    });
    return errors;
}

// Sets the variables for the next World (each ctest entry is its own process).
void configure(const char* hcclAlgo) {
    ASSERT_EQ(setenv("HOSTCCL_COST_MODEL", kModel, 1), 0);
    ASSERT_EQ(setenv("HCCL_EXEC_TIMEOUT", "20", 1), 0);
    if (hcclAlgo != nullptr) {
        ASSERT_EQ(setenv("HCCL_ALGO", hcclAlgo, 1), 0);
    }
}

TEST(SelectorAgreement, AlltoAllVWithOwnSizesAcrossTheCrossover) {
    configure(nullptr);
    World w(2);
    ASSERT_TRUE(w.ok()) << "HcclCommInitAll failed: " << w.initResult();
    // Rank 0 moves 8 B (pairwise by the model), rank 1 2 MiB (direct by the model).
    const uint64_t big = (2u << 20) / 4;
    std::vector<std::string> errors = alltoallvOnEveryRank(w, {{1, 1}, {1, big}});
    for (uint32_t r = 0; r < 2; ++r) EXPECT_EQ(errors[r], "") << "rank " << r;
}

TEST(SelectorAgreement, OneRanksEqualBlocksDoNotMakeItBruck) {
    // Bruck needs equal blocks on every rank; rank 0's are equal (its row and column
    // are all 4), the others' are not: none may take the forced Bruck. (At 4 ranks
    // Bruck's first step carries two blocks; at 3 its messages are pairwise's.)
    configure("alltoall=level0:NA;level1:NB");
    World w(4);
    ASSERT_TRUE(w.ok()) << "HcclCommInitAll failed: " << w.initResult();
    std::vector<std::string> errors =
        alltoallvOnEveryRank(w, {{4, 4, 4, 4}, {4, 4, 9, 9}, {4, 9, 9, 9}, {4, 9, 9, 9}});
    for (uint32_t r = 0; r < 4; ++r) EXPECT_EQ(errors[r], "") << "rank " << r;
}

// Rank r's layout for the V gathers: block sizes alike on every rank (3 + p elements
// from rank p), but where they sit is each rank's own: even ranks pack them in rank
// order, odd ranks put them in reverse order with gaps.
void ownLayout(uint32_t r, uint32_t n, std::vector<uint64_t>* counts, std::vector<uint64_t>* displs, uint64_t* total) {
    counts->assign(n, 0);
    displs->assign(n, 0);
    uint64_t off = 0;
    for (uint32_t i = 0; i < n; ++i) {
        const uint32_t p = r % 2 == 0 ? i : n - 1 - i;
        (*counts)[p] = 3 + p;
        (*displs)[p] = off;
        off += (*counts)[p] + (r % 2 == 0 ? 0 : 2);
    }
    *total = off;
}

TEST(SelectorAgreement, VGathersWithEachRanksOwnDisplacements) {
    // Halving-doubling once needed packed blocks, so a rank whose displacements were not
    // took another algorithm than its peers; it now stages them.
    configure("allgather=level0:NA;level1:H-D_R/reducescatter=level0:NA;level1:H-D_R");
    const uint32_t n = 4;
    World w(n);
    ASSERT_TRUE(w.ok()) << "HcclCommInitAll failed: " << w.initResult();
    std::vector<std::string> errors(n);
    w.run([&](uint32_t r) {
        std::vector<uint64_t> counts, displs;
        uint64_t total = 0;
        ownLayout(r, n, &counts, &displs, &total);
        std::vector<int32_t> mine(counts[r]), gathered(total, -1), input(total, 0), reduced(counts[r], -1);
        for (uint64_t i = 0; i < counts[r]; ++i) mine[i] = valueOf(r, 0, i);
        for (uint32_t p = 0; p < n; ++p)
            for (uint64_t i = 0; i < counts[p]; ++i) input[displs[p] + i] = valueOf(r, p, i);
        HcclResult rc1 = HcclAllGatherV(mine.data(), counts[r], gathered.data(), counts.data(), displs.data(),
                                        HCCL_DATA_TYPE_INT32, w.comm(r), w.stream(r));
        HcclResult rc2 = HcclReduceScatterV(input.data(), counts.data(), displs.data(), reduced.data(), counts[r],
                                            HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, w.comm(r), w.stream(r));
        if (rc1 != HCCL_SUCCESS || rc2 != HCCL_SUCCESS || aclrtSynchronizeStream(w.stream(r)) != ACL_SUCCESS) {
            errors[r] = "a call failed (ranks chose different algorithms?)";
            return 0;
        }
        for (uint32_t p = 0; p < n && errors[r].empty(); ++p)
            for (uint64_t i = 0; i < counts[p]; ++i)
                if (gathered[displs[p] + i] != valueOf(p, 0, i)) {
                    errors[r] = "allgatherv: block of rank " + std::to_string(p) + " element " + std::to_string(i);
                    break;
                }
        for (uint64_t i = 0; i < counts[r] && errors[r].empty(); ++i) {
            int32_t want = 0;
            for (uint32_t p = 0; p < n; ++p) want += valueOf(p, r, i);
            if (reduced[i] != want) errors[r] = "reducescatterv: element " + std::to_string(i);
        }
        return 0;
    });
    for (uint32_t r = 0; r < n; ++r) EXPECT_EQ(errors[r], "") << "rank " << r;
}

}  // namespace
