// Abort and shrink with ranks as threads of one process: an abort wakes a waiting
// op at once on this rank and, through the health channel, on its peers; the
// survivors shrink to a working communicator without new root info.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

#include "hostccl/hostccl.h"
#include "tests/support/world.h"

using namespace hostccl::test;
using Clock = std::chrono::steady_clock;

namespace {

double msSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

int allReduceInt(HcclComm comm, aclrtStream stream, int64_t* value) {
    int rc = HcclAllReduce(value, value, 1, HCCL_DATA_TYPE_INT64, HCCL_REDUCE_SUM, comm, stream);
    return rc != 0 ? rc : aclrtSynchronizeStream(stream);
}

// Rank 0 waits in an allreduce that rank 1 never joins; another thread aborts rank
// 0's communicator. Rank 0's op ends at once with HCCL_E_INTERNAL; rank 1, which
// then tries an op, learns of the abort from the health channel (HCCL_E_REMOTE).
TEST(Abort, WakesTheWaiterAndTellsThePeers) {
    World w(2);
    ASSERT_TRUE(w.ok());
    HcclComm victim = w.release(0);
    int64_t x = 1;
    ASSERT_EQ(HcclAllReduce(&x, &x, 1, HCCL_DATA_TYPE_INT64, HCCL_REDUCE_SUM, victim, w.stream(0)), HCCL_SUCCESS);
    std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the op is waiting for rank 1
    auto start = Clock::now();
    std::thread aborter([&] { EXPECT_EQ(HostcclCommAbort(victim), HCCL_SUCCESS); });
    EXPECT_EQ(aclrtSynchronizeStream(w.stream(0)), HCCL_E_INTERNAL);
    const double wokeMs = msSince(start);
    aborter.join();
    const double abortMs = msSince(start);
    EXPECT_LT(wokeMs, 1000.0) << "the waiter woke " << wokeMs << " ms after the abort";
    EXPECT_LT(abortMs, 1000.0);
    std::printf("abort: waiter woke after %.1f ms, HostcclCommAbort returned after %.1f ms\n", wokeMs, abortMs);
    // The handle is gone; the peer hears of the abort.
    HcclResult async = HCCL_SUCCESS;
    EXPECT_EQ(HcclGetCommAsyncError(victim, &async), HCCL_E_PARA);
    auto heard = Clock::now();
    while (HcclGetCommAsyncError(w.comm(1), &async) == HCCL_SUCCESS && async == HCCL_SUCCESS && msSince(heard) < 5000)
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    EXPECT_EQ(async, HCCL_E_REMOTE);
    int64_t y = 1;
    EXPECT_EQ(allReduceInt(w.comm(1), w.stream(1), &y), HCCL_E_REMOTE);
}

// While rank 1 waits in an op, rank 0 aborts: rank 1's op fails within a second.
TEST(Abort, PeerWaitingInAnOpFailsPromptly) {
    World w(3);
    ASSERT_TRUE(w.ok());
    HcclComm victim = w.release(0);
    std::vector<double> failedAfter(3, -1);
    auto start = Clock::now();
    auto rcs = w.run([&](uint32_t r) {
        if (r == 0) {
            std::this_thread::sleep_for(std::chrono::milliseconds(300));
            start = Clock::now();
            return int(HostcclCommAbort(victim));
        }
        int64_t v = 1;
        int rc = allReduceInt(w.comm(r), w.stream(r), &v);
        failedAfter[r] = msSince(start);
        return rc;
    });
    EXPECT_EQ(rcs[0], HCCL_SUCCESS);
    for (uint32_t r = 1; r < 3; ++r) {
        EXPECT_EQ(rcs[r], HCCL_E_REMOTE) << "rank " << r;
        EXPECT_LT(failedAfter[r], 1000.0) << "rank " << r;
        std::printf("abort by rank 0: rank %u's op failed %.1f ms later\n", r, failedAfter[r]);
    }
}

// A process goes on making communicators after aborting one.
TEST(Abort, ProcessCanCreateNewCommunicators) {
    {
        World w(2);
        ASSERT_TRUE(w.ok());
        EXPECT_EQ(HostcclCommAbort(w.release(0)), HCCL_SUCCESS);
        EXPECT_EQ(HostcclCommAbort(w.release(1)), HCCL_SUCCESS);
    }
    World again(2);
    ASSERT_TRUE(again.ok());
    auto rcs = again.run([&](uint32_t r) {
        int64_t v = r + 1;
        int rc = allReduceInt(again.comm(r), again.stream(r), &v);
        return rc != 0 ? rc : (v == 3 ? 0 : 1000);
    });
    EXPECT_EQ(rcs, std::vector<int>(2, 0));
}

TEST(Abort, BadHandles) {
    EXPECT_EQ(HostcclCommAbort(nullptr), HCCL_E_PTR);
    int notAComm = 0;
    EXPECT_EQ(HostcclCommAbort(&notAComm), HCCL_E_PARA);
}

// Four ranks; rank 3 leaves by aborting. The other three shrink (excluding 3) and
// get exact results from the new communicator, whose ranks keep their order.
TEST(Shrink, SurvivorsCarryOn) {
    World w(4);
    ASSERT_TRUE(w.ok());
    HcclComm leaver = w.release(3);
    std::vector<HcclComm> shrunk(3, nullptr);
    std::vector<double> shrinkMs(3, 0);
    auto rcs = w.run([&](uint32_t r) {
        if (r == 3) return int(HostcclCommAbort(leaver));
        int64_t v = 1;
        int rc = allReduceInt(w.comm(r), w.stream(r), &v);  // fails: rank 3 is gone
        if (rc != HCCL_E_REMOTE) return 100 + rc;
        const uint32_t gone[] = {3};
        auto start = Clock::now();
        rc = HostcclCommShrink(w.comm(r), gone, 1, nullptr, &shrunk[r]);
        shrinkMs[r] = msSince(start);
        if (rc != 0) return 200 + rc;
        uint32_t newRank = 99, newSize = 0;
        HcclGetRankId(shrunk[r], &newRank);
        HcclGetRankSize(shrunk[r], &newSize);
        if (newRank != r || newSize != 3) return 300;
        int64_t sum = int64_t(r) + 10;
        rc = allReduceInt(shrunk[r], w.stream(r), &sum);
        return rc != 0 ? 400 + rc : (sum == 10 + 11 + 12 ? 0 : 500);
    });
    EXPECT_EQ(rcs, std::vector<int>(4, 0));
    for (uint32_t r = 0; r < 3; ++r) {
        std::printf("shrink: rank %u built the 3-rank communicator in %.1f ms\n", r, shrinkMs[r]);
        EXPECT_EQ(HcclCommDestroy(shrunk[r]), HCCL_SUCCESS);
    }
}

// A healthy communicator shrinks too (ranks leaving on purpose), twice in a row.
TEST(Shrink, HealthyCommunicatorTwice) {
    World w(4);
    ASSERT_TRUE(w.ok());
    auto rcs = w.run([&](uint32_t r) {
        if (r == 0) return 0;  // rank 0 leaves; it takes no part in the shrinks
        const uint32_t first[] = {0};
        HcclComm a = nullptr, b = nullptr;
        if (HostcclCommShrink(w.comm(r), first, 1, nullptr, &a) != 0) return 1;
        const uint32_t both[] = {2, 0};  // any order
        if (r != 2 && HostcclCommShrink(w.comm(r), both, 2, nullptr, &b) != 0) return 2;
        int64_t v = r;
        int rc = allReduceInt(a, w.stream(r), &v);
        if (rc != 0 || v != 1 + 2 + 3) return 3;
        if (b != nullptr) {
            v = r;
            rc = allReduceInt(b, w.stream(r), &v);
            if (rc != 0 || v != 1 + 3) return 4;
            HcclCommDestroy(b);
        }
        HcclCommDestroy(a);
        return 0;
    });
    EXPECT_EQ(rcs, std::vector<int>(4, 0));
}

TEST(Shrink, BadArguments) {
    World w(2);
    ASSERT_TRUE(w.ok());
    HcclComm out = nullptr;
    const uint32_t self[] = {0}, outside[] = {2}, twice[] = {1, 1};
    EXPECT_EQ(HostcclCommShrink(w.comm(0), self, 1, nullptr, &out), HCCL_E_PARA);
    EXPECT_EQ(HostcclCommShrink(w.comm(0), outside, 1, nullptr, &out), HCCL_E_PARA);
    EXPECT_EQ(HostcclCommShrink(w.comm(0), twice, 2, nullptr, &out), HCCL_E_PARA);
    EXPECT_EQ(HostcclCommShrink(w.comm(0), nullptr, 1, nullptr, &out), HCCL_E_PTR);
    EXPECT_EQ(HostcclCommShrink(w.comm(0), outside, 1, nullptr, nullptr), HCCL_E_PTR);
    EXPECT_EQ(HostcclCommShrink(nullptr, outside, 1, nullptr, &out), HCCL_E_PTR);
    EXPECT_EQ(out, nullptr);
    // Nothing changed: the communicator still works.
    auto rcs = w.run([&](uint32_t r) {
        int64_t v = 2;
        int rc = allReduceInt(w.comm(r), w.stream(r), &v);
        return rc != 0 ? rc : (v == 4 ? 0 : 1000);
    });
    EXPECT_EQ(rcs, std::vector<int>(2, 0));
}

}  // namespace
