// The board where threads of one process meet for the direct algorithms
// (algorithms/direct/process_board.h): every rank sees the same count of raised
// flags, barriers repeat, and a barrier someone never reaches ends every waiter
// with a reason naming who is missing instead of hanging, and stays broken.
#include "algorithms/direct/process_board.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

using hostccl::CommFailure;
using hostccl::Deadline;
using hostccl::ProcessBoard;

namespace {

ProcessBoard::Waiting within(std::chrono::milliseconds limit, const CommFailure* failure = nullptr) {
    ProcessBoard::Waiting how;
    how.deadline = Deadline::after(limit);
    how.failure = failure;
    return how;
}

struct Outcome {
    HcclResult rc = HCCL_E_RESERVED;
    uint32_t flagged = 0;
    std::string why;
};

// Every rank in `ranks` arrives once (flag: rank is odd), each on its own thread.
std::vector<Outcome> arriveAll(ProcessBoard& board, const std::vector<uint32_t>& ranks, const ProcessBoard::Waiting& how) {
    std::vector<Outcome> out(board.size());
    std::vector<std::thread> threads;
    for (uint32_t r : ranks)
        threads.emplace_back([&, r] { out[r].rc = board.arrive(r, r % 2 == 1, how, &out[r].flagged, &out[r].why); });
    for (std::thread& t : threads) t.join();
    return out;
}

std::vector<uint32_t> allRanks(uint32_t n) {
    std::vector<uint32_t> v(n);
    for (uint32_t r = 0; r < n; ++r) v[r] = r;
    return v;
}

TEST(ProcessBoard, EveryRankSeesTheSameFlagCountRoundAfterRound) {
    constexpr uint32_t n = 37;  // more threads than cores: waiters must sleep, not spin
    ProcessBoard board(n);
    for (int round = 0; round < 20; ++round) {
        const std::vector<Outcome> out = arriveAll(board, allRanks(n), within(std::chrono::seconds(30)));
        for (uint32_t r = 0; r < n; ++r) {
            ASSERT_EQ(out[r].rc, HCCL_SUCCESS) << "round " << round << " rank " << r << ": " << out[r].why;
            ASSERT_EQ(out[r].flagged, n / 2) << "round " << round << " rank " << r;  // the odd ranks
        }
    }
}

TEST(ProcessBoard, PublishedEntriesAreSeenByPeersAfterTheBarrier) {
    constexpr uint32_t n = 8;
    ProcessBoard board(n);
    std::vector<int> values(n);
    std::vector<int> seen(n * n, -1);
    std::vector<std::thread> threads;
    for (uint32_t r = 0; r < n; ++r)
        threads.emplace_back([&, r] {
            values[r] = int(100 + r);
            board.publish(r, &values[r]);
            uint32_t flagged = 0;
            std::string why;
            if (board.arrive(r, false, within(std::chrono::seconds(30)), &flagged, &why) != HCCL_SUCCESS) return;
            for (uint32_t p = 0; p < n; ++p) seen[r * n + p] = *static_cast<const int*>(board.entry(p));
        });
    for (std::thread& t : threads) t.join();
    for (uint32_t r = 0; r < n; ++r)
        for (uint32_t p = 0; p < n; ++p) EXPECT_EQ(seen[r * n + p], int(100 + p)) << "rank " << r << " peer " << p;
}

TEST(ProcessBoard, AMissingRankEndsEveryWaiterNamingItAndTheBoardStaysBroken) {
    constexpr uint32_t n = 6;
    ProcessBoard board(n);
    std::vector<uint32_t> present = {0, 1, 2, 4, 5};  // rank 3 never comes
    const auto t0 = std::chrono::steady_clock::now();
    const std::vector<Outcome> out = arriveAll(board, present, within(std::chrono::milliseconds(300)));
    const double waited = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    for (uint32_t r : present) {
        EXPECT_EQ(out[r].rc, HCCL_E_TIMEOUT) << "rank " << r;
        EXPECT_EQ(out[r].why, "rank 3 did not reach the op in time") << "rank " << r;
    }
    EXPECT_LT(waited, 5.0) << "waiters must leave at their deadline";
    // Rank 3 arriving late, and any later barrier, fail at once with the first reason.
    Outcome late;
    late.rc = board.arrive(3, false, within(std::chrono::seconds(30)), &late.flagged, &late.why);
    EXPECT_EQ(late.rc, HCCL_E_TIMEOUT);
    EXPECT_EQ(late.why, "rank 3 did not reach the op in time");
}

TEST(ProcessBoard, ManyMissingRanksAreCountedNotAllNamed) {
    constexpr uint32_t n = 12;
    ProcessBoard board(n);
    const std::vector<Outcome> out = arriveAll(board, {0, 1, 2}, within(std::chrono::milliseconds(200)));
    EXPECT_EQ(out[0].rc, HCCL_E_TIMEOUT);
    EXPECT_EQ(out[0].why, "ranks 3, 4, 5, 6 and 5 more (of 12) did not reach the op in time");
}

TEST(ProcessBoard, ACommunicatorFailureEndsTheWaitWithItsCode) {
    constexpr uint32_t n = 3;
    ProcessBoard board(n);
    CommFailure failure;
    std::thread raiser([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        failure.raise(HCCL_E_REMOTE, 2, "rank 2 died");
    });
    const std::vector<Outcome> out = arriveAll(board, {0, 1}, within(std::chrono::seconds(60), &failure));
    raiser.join();
    for (uint32_t r : {0u, 1u}) {
        EXPECT_EQ(out[r].rc, HCCL_E_REMOTE) << "rank " << r;
        EXPECT_EQ(out[r].why, "rank 2 died") << "rank " << r;
    }
}

// close(): peers may be reading this rank's buffers, so the wait ignores the deadline.
TEST(ProcessBoard, AWaitThatMayNotGiveUpOutlastsItsDeadline) {
    constexpr uint32_t n = 2;
    ProcessBoard board(n);
    ProcessBoard::Waiting stay = within(std::chrono::milliseconds(1));
    stay.mayGiveUp = false;
    Outcome first;
    std::thread waiter([&] { first.rc = board.arrive(0, true, stay, &first.flagged, &first.why); });
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    Outcome second;
    second.rc = board.arrive(1, false, within(std::chrono::seconds(30)), &second.flagged, &second.why);
    waiter.join();
    EXPECT_EQ(first.rc, HCCL_SUCCESS) << first.why;
    EXPECT_EQ(second.rc, HCCL_SUCCESS) << second.why;
    EXPECT_EQ(first.flagged, 1u);
    EXPECT_EQ(second.flagged, 1u);
}

TEST(ProcessBoard, RanksOfOneCommunicatorShareOneBoardOthersDoNot) {
    auto a = ProcessBoard::join(77, 4), b = ProcessBoard::join(77, 4), c = ProcessBoard::join(78, 4);
    EXPECT_EQ(a.get(), b.get());
    EXPECT_NE(a.get(), c.get());
    EXPECT_NE(a.get(), ProcessBoard::join(77, 5).get()) << "a different size is a different communicator";
}

}  // namespace
