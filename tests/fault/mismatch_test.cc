// Ranks that disagree on an op at the same sequence number: every rank's op fails
// (no hang, no corrupted data), HcclGetCommAsyncError agrees with it, and each
// rank's failure reason names both sides' values. A broadcast whose disagreeing
// ranks exchange no message (each thinks it is the root, so none receives from the
// other) cannot be caught inside that op without an extra round trip: the next op
// that receives the stray message fails naming it, and the failure reaches every
// rank through the health channel. The root cases check exactly that.
//
// Ranks that are threads of one process run the direct algorithms on the process
// board, where no message crosses: the cases with HCCL_ALGO forced put one side on
// the board and the other on links (a ring broadcast beside a direct allreduce), so
// the board must notice a rank gone to another op and a message no op received.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "hostccl/hostccl.h"
#include "tests/support/world.h"

using namespace hostccl::test;

namespace {

struct Kind {
    const char* name;
    uint32_t ranks;
    const char* mine;    // what the odd rank's failure text or the others' must show
    const char* theirs;
    const char* algo = nullptr;  // HCCL_ALGO for the communicator (nullptr: the selector's choice)
};

constexpr const char* kBoardBesideLinks = "broadcast=level1:ring/allreduce=level1:direct";
constexpr const char* kLinksBesideBoard = "broadcast=level1:direct/allreduce=level1:ring";

// Rank `odd` (the last) calls a different op than the others.
int callOp(const Kind& k, uint32_t r, uint32_t odd, std::vector<int32_t>& buf, HcclComm comm, aclrtStream s) {
    const bool isOdd = r == odd;
    const std::string kind = k.name;
    if (kind == "count")
        return HcclAllReduce(buf.data(), buf.data(), isOdd ? 10 : 12, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, comm, s);
    if (kind == "dtype")
        return HcclAllReduce(buf.data(), buf.data(), 12, isOdd ? HCCL_DATA_TYPE_FP32 : HCCL_DATA_TYPE_INT32,
                             HCCL_REDUCE_SUM, comm, s);
    if (kind == "redop")
        return HcclAllReduce(buf.data(), buf.data(), 12, HCCL_DATA_TYPE_INT32, isOdd ? HCCL_REDUCE_MAX : HCCL_REDUCE_SUM,
                             comm, s);
    if (kind == "collective")
        return isOdd ? HcclBroadcast(buf.data(), 12, HCCL_DATA_TYPE_INT32, 0, comm, s)
                     : HcclAllReduce(buf.data(), buf.data(), 12, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, comm, s);
    // root
    return HcclBroadcast(buf.data(), 12, HCCL_DATA_TYPE_INT32, isOdd ? odd : 0, comm, s);
}

class Mismatch : public ::testing::TestWithParam<Kind> {};

TEST_P(Mismatch, EveryRankFailsNamingBothSides) {
    const Kind k = GetParam();
    if (k.algo != nullptr) {
        ASSERT_EQ(setenv("HCCL_ALGO", k.algo, 1), 0);
    }
    World w(k.ranks);
    unsetenv("HCCL_ALGO");
    ASSERT_TRUE(w.ok());
    const uint32_t odd = k.ranks - 1;
    std::vector<std::vector<int32_t>> bufs(k.ranks, std::vector<int32_t>(64, 1));
    std::vector<std::string> reasons(k.ranks);
    std::vector<HcclResult> async(k.ranks);
    auto start = std::chrono::steady_clock::now();
    auto rcs = w.run([&](uint32_t r) {
        int rc = callOp(k, r, odd, bufs[r], w.comm(r), w.stream(r));
        if (rc == 0) rc = aclrtSynchronizeStream(w.stream(r));
        if (rc == 0) {  // nothing crossed between the disagreeing ranks: the next op reads the stray message
            rc = HcclAllReduce(bufs[r].data(), bufs[r].data(), 4, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, w.comm(r),
                               w.stream(r));
            if (rc == 0) rc = aclrtSynchronizeStream(w.stream(r));
        }
        // A rank whose follow-up op found all it needed hears of the failure from its peers.
        for (int i = 0; i < 500 && HcclGetCommAsyncError(w.comm(r), &async[r]) == 0 && async[r] == 0; ++i)
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        HcclResult code;
        int32_t culprit;
        char text[1024];
        HostcclCommGetFailure(w.comm(r), &code, &culprit, text, sizeof text);
        reasons[r] = text;
        return rc;
    });
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
    const bool rooted = std::string(k.name) == "root";
    for (uint32_t r = 0; r < k.ranks; ++r) {
        SCOPED_TRACE("rank " + std::to_string(r) + ": " + reasons[r]);
        if (!rooted) {
            EXPECT_EQ(rcs[r], HCCL_E_PARA);
        }
        EXPECT_EQ(async[r], HCCL_E_PARA);
        EXPECT_NE(reasons[r].find("mismatch"), std::string::npos);
        EXPECT_NE(reasons[r].find(k.mine), std::string::npos);
        EXPECT_NE(reasons[r].find(k.theirs), std::string::npos);
    }
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, Mismatch,
    ::testing::Values(Kind{"count", 2, "count 10", "count 12"}, Kind{"count", 4, "count 10", "count 12"},
                      Kind{"dtype", 2, "fp32", "int32"}, Kind{"dtype", 4, "fp32", "int32"},
                      Kind{"redop", 2, "max", "sum"}, Kind{"redop", 4, "max", "sum"},
                      Kind{"collective", 2, "Broadcast", "AllReduce"}, Kind{"collective", 4, "Broadcast", "AllReduce"},
                      Kind{"root", 2, "root ", "Broadcast seq 1"}, Kind{"root", 3, "root ", "Broadcast seq 1"},
                      Kind{"collective", 4, "Broadcast", "AllReduce", kBoardBesideLinks},
                      Kind{"collective", 4, "Broadcast", "AllReduce", kLinksBesideBoard},
                      Kind{"root", 3, "root ", "Broadcast seq 1", kBoardBesideLinks}),
    [](const ::testing::TestParamInfo<Kind>& i) {
        std::string name = std::string(i.param.name) + "_" + std::to_string(i.param.ranks) + "ranks";
        if (i.param.algo == kBoardBesideLinks) name += "_ringBroadcastBesideDirectAllReduce";
        if (i.param.algo == kLinksBesideBoard) name += "_directBroadcastBesideRingAllReduce";
        return name;
    });

}  // namespace
