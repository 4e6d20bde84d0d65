// Bad input through the public API: the matching HcclResult, and nothing changed
// (outputs untouched, the communicator still works afterwards).
#include <gtest/gtest.h>
#include <dirent.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <thread>

#include "hostccl/hostccl.h"
#include "tests/support/world.h"

using namespace hostccl;
using namespace hostccl::test;

namespace {

World& pair() {
    static World w(2);
    return w;
}

// A valid allreduce on both ranks still gives the right answer.
void expectStillWorks(World& w) {
    std::vector<std::vector<int32_t>> v(w.size(), std::vector<int32_t>(5, 1));
    auto rcs = w.run([&](uint32_t r) {
        HcclResult rc = HcclAllReduce(v[r].data(), v[r].data(), 5, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, w.comm(r), w.stream(r));
        return rc != HCCL_SUCCESS ? int(rc) : aclrtSynchronizeStream(w.stream(r));
    });
    for (uint32_t r = 0; r < w.size(); ++r) {
        EXPECT_EQ(rcs[r], 0);
        EXPECT_EQ(v[r], std::vector<int32_t>(5, int32_t(w.size())));
    }
}

}  // namespace

TEST(BadInput, NullAndForeignCommunicators) {
    float x = 0;
    int notAComm = 0;
    EXPECT_EQ(HcclAllReduce(&x, &x, 1, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, nullptr, nullptr), HCCL_E_PTR);
    EXPECT_EQ(HcclAllReduce(&x, &x, 1, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, &notAComm, nullptr), HCCL_E_PARA);
    EXPECT_EQ(HcclBarrier(&notAComm, nullptr), HCCL_E_PARA);
    uint32_t n = 99;
    EXPECT_EQ(HcclGetRankSize(&notAComm, &n), HCCL_E_PARA);
    EXPECT_EQ(n, 99u);
    EXPECT_EQ(HcclGetRankSize(pair().comm(0), nullptr), HCCL_E_PTR);
    EXPECT_EQ(HcclCommDestroy(&notAComm), HCCL_E_PARA);
    EXPECT_EQ(HcclCommDestroy(nullptr), HCCL_E_PTR);

    char text[64] = "unchanged";
    EXPECT_EQ(HostcclCommDescribe(nullptr, text, sizeof text), HCCL_E_PTR);
    EXPECT_EQ(HostcclCommDescribe(&notAComm, text, sizeof text), HCCL_E_PARA);
    EXPECT_EQ(HostcclCommDescribe(pair().comm(0), nullptr, 64), HCCL_E_PTR);
    EXPECT_EQ(HostcclCommDescribe(pair().comm(0), text, 0), HCCL_E_PARA);
    EXPECT_STREQ(text, "unchanged");
    ASSERT_EQ(HostcclCommDescribe(pair().comm(0), text, sizeof text), HCCL_SUCCESS);  // cut to fit
    EXPECT_EQ(std::strlen(text), sizeof text - 1);
    EXPECT_EQ(std::string(text).rfind("communicator ", 0), 0u);
}

TEST(BadInput, DestroyedCommunicator) {
    World w(2);
    ASSERT_TRUE(w.ok());
    HcclComm c0 = w.comm(0), c1 = w.comm(1);
    uint32_t rank = 7;
    ASSERT_EQ(HcclGetRankId(c1, &rank), HCCL_SUCCESS);  // this thread now remembers c1 as live
    rank = 7;
    ASSERT_EQ(HcclCommDestroy(c0), HCCL_SUCCESS);
    ASSERT_EQ(HcclCommDestroy(c1), HCCL_SUCCESS);
    EXPECT_EQ(HcclCommDestroy(c0), HCCL_E_PARA);  // twice
    float x = 1;
    EXPECT_EQ(HcclAllReduce(&x, &x, 1, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c0, w.stream(0)), HCCL_E_PARA);
    EXPECT_EQ(HcclGetRankId(c1, &rank), HCCL_E_PARA);
    EXPECT_EQ(rank, 7u);
}

TEST(BadInput, InvalidOperatorArguments) {
    World& w = pair();
    ASSERT_TRUE(w.ok());
    HcclComm c = w.comm(0);
    aclrtStream s = w.stream(0);
    std::vector<float> in(8, 1), out(8, -1);
    auto dt = [](int v) { return static_cast<HcclDataType>(v); };
    auto op = [](int v) { return static_cast<HcclReduceOp>(v); };
    EXPECT_EQ(HcclAllReduce(in.data(), out.data(), 8, dt(13), HCCL_REDUCE_SUM, c, s), HCCL_E_PARA);
    EXPECT_EQ(HcclAllReduce(in.data(), out.data(), 8, dt(99), HCCL_REDUCE_SUM, c, s), HCCL_E_PARA);
    EXPECT_EQ(HcclAllReduce(in.data(), out.data(), 8, HCCL_DATA_TYPE_FP32, op(4), c, s), HCCL_E_PARA);
    EXPECT_EQ(HcclAllReduce(in.data(), out.data(), 8, HCCL_DATA_TYPE_FP8E4M3, HCCL_REDUCE_SUM, c, s), HCCL_E_NOT_SUPPORT);
    EXPECT_EQ(HcclReduceScatter(in.data(), out.data(), 2, HCCL_DATA_TYPE_HIF8, HCCL_REDUCE_MAX, c, s), HCCL_E_NOT_SUPPORT);
    EXPECT_EQ(HcclAllReduce(nullptr, out.data(), 8, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c, s), HCCL_E_PTR);
    EXPECT_EQ(HcclAllReduce(in.data(), nullptr, 8, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c, s), HCCL_E_PTR);
    EXPECT_EQ(HcclAllReduce(in.data(), out.data(), UINT64_MAX / 2, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c, s), HCCL_E_PARA);
    EXPECT_EQ(HcclAllGather(in.data(), out.data(), UINT64_MAX / 4, HCCL_DATA_TYPE_FP32, c, s), HCCL_E_PARA);
    char* bytes = reinterpret_cast<char*>(in.data());
    EXPECT_EQ(HcclAllReduce(bytes + 1, out.data(), 2, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c, s), HCCL_E_PARA);
    EXPECT_EQ(HcclBroadcast(in.data(), 8, HCCL_DATA_TYPE_FP32, 2, c, s), HCCL_E_PARA);
    EXPECT_EQ(HcclReduce(in.data(), out.data(), 8, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, 5, c, s), HCCL_E_PARA);
    EXPECT_EQ(HcclScatter(in.data(), out.data(), 4, HCCL_DATA_TYPE_FP32, 9, c, s), HCCL_E_PARA);
    EXPECT_EQ(HcclSend(in.data(), 8, HCCL_DATA_TYPE_FP32, 0, c, s), HCCL_E_PARA);  // to itself
    EXPECT_EQ(HcclRecv(out.data(), 8, HCCL_DATA_TYPE_FP32, 2, c, s), HCCL_E_PARA);
    EXPECT_EQ(HcclAlltoAll(in.data(), 4, HCCL_DATA_TYPE_FP32, out.data(), 3, HCCL_DATA_TYPE_FP32, c, s), HCCL_E_PARA);
    EXPECT_EQ(HcclAlltoAll(in.data(), 4, HCCL_DATA_TYPE_FP32, out.data(), 4, HCCL_DATA_TYPE_INT32, c, s), HCCL_E_PARA);
    EXPECT_EQ(HcclAlltoAllV(in.data(), nullptr, nullptr, HCCL_DATA_TYPE_FP32, out.data(), nullptr, nullptr,
                            HCCL_DATA_TYPE_FP32, c, s), HCCL_E_PTR);
    EXPECT_EQ(HcclAlltoAllVC(in.data(), nullptr, HCCL_DATA_TYPE_FP32, out.data(), HCCL_DATA_TYPE_FP32, c, s), HCCL_E_PTR);
    uint64_t counts[2] = {1, 3}, displs[2] = {0, 1};
    EXPECT_EQ(HcclAllGatherV(in.data(), 2, out.data(), counts, displs, HCCL_DATA_TYPE_FP32, c, s), HCCL_E_PARA);
    EXPECT_EQ(HcclReduceScatterV(in.data(), counts, displs, in.data(), 1, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c, s),
              HCCL_E_PARA);  // sendBuf == recvBuf
    uint64_t huge[2] = {UINT64_MAX, 1}, zero[2] = {0, 0};
    EXPECT_EQ(HcclAlltoAllV(in.data(), huge, zero, HCCL_DATA_TYPE_FP32, out.data(), counts, displs, HCCL_DATA_TYPE_FP32,
                            c, s), HCCL_E_PARA);
    HcclSendRecvItem items[2] = {{HCCL_SEND, in.data(), 8, HCCL_DATA_TYPE_FP32, 1},
                                 {static_cast<HcclSendRecvType>(5), out.data(), 8, HCCL_DATA_TYPE_FP32, 1}};
    EXPECT_EQ(HcclBatchSendRecv(items, 2, c, s), HCCL_E_PARA);
    EXPECT_EQ(HcclBatchSendRecv(nullptr, 1, c, s), HCCL_E_PTR);
    uint32_t source = 77;
    EXPECT_EQ(HostcclRecvAny(out.data(), 8, HCCL_DATA_TYPE_FP32, nullptr, c, s), HCCL_E_PTR);
    EXPECT_EQ(HostcclRecvAny(nullptr, 8, HCCL_DATA_TYPE_FP32, &source, c, s), HCCL_E_PTR);
    EXPECT_EQ(HostcclRecvAny(out.data(), 8, dt(99), &source, c, s), HCCL_E_PARA);
    EXPECT_EQ(HcclGroupStart(), HCCL_SUCCESS);
    EXPECT_EQ(HostcclRecvAny(out.data(), 8, HCCL_DATA_TYPE_FP32, &source, c, s), HCCL_E_NOT_SUPPORT);
    EXPECT_EQ(HcclGroupEnd(), HCCL_SUCCESS);
    EXPECT_EQ(source, 77u);
    int notAStream = 0;
    EXPECT_EQ(HcclAllReduce(in.data(), out.data(), 8, HCCL_DATA_TYPE_FP32, HCCL_REDUCE_SUM, c, &notAStream), HCCL_E_PARA);
    // Nothing was enqueued and nothing was written.
    EXPECT_EQ(aclrtSynchronizeStream(s), 0);
    EXPECT_EQ(out, std::vector<float>(8, -1));
    EXPECT_EQ(in, std::vector<float>(8, 1));
    expectStillWorks(w);
}

// A receive from any source whose sender sends another count fails (naming both
// sides) and the sender's communicator hears of it, as with a receive from that rank
// (the send itself may have completed: it fitted the link's buffer).
TEST(BadInput, ReceiveFromAnySourceOfAnotherSize) {
    World w(2);
    ASSERT_TRUE(w.ok());
    std::vector<std::vector<int32_t>> v(2, std::vector<int32_t>(12, 5));
    uint32_t source = 77;
    auto rcs = w.run([&](uint32_t r) {
        if (r == 1) HcclSend(v[r].data(), 12, HCCL_DATA_TYPE_INT32, 0, w.comm(r), w.stream(r));
        else HostcclRecvAny(v[r].data(), 10, HCCL_DATA_TYPE_INT32, &source, w.comm(r), w.stream(r));
        return aclrtSynchronizeStream(w.stream(r));
    });
    EXPECT_EQ(rcs[0], HCCL_E_PARA);
    HcclResult heard = HcclResult(rcs[1]);
    for (int i = 0; i < 300 && heard == HCCL_SUCCESS; ++i) {
        HcclGetCommAsyncError(w.comm(1), &heard);
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    EXPECT_EQ(heard, HCCL_E_PARA);
    EXPECT_EQ(source, 77u);
    EXPECT_EQ(v[0], std::vector<int32_t>(12, 5));
}

TEST(BadInput, InitArguments) {
    HcclComm comm = nullptr;
    HcclRootInfo zeros{};
    EXPECT_EQ(HcclCommInitRootInfo(2, &zeros, 0, &comm), HCCL_E_PARA);
    HcclRootInfo invalid{};
    std::strcpy(invalid.internal, "invalid");
    EXPECT_EQ(HcclCommInitRootInfo(2, &invalid, 0, &comm), HCCL_E_PARA);
    EXPECT_EQ(HcclCommInitRootInfo(0, &zeros, 0, &comm), HCCL_E_PARA);
    EXPECT_EQ(HcclCommInitRootInfo(2, &zeros, 2, &comm), HCCL_E_PARA);
    EXPECT_EQ(HcclCommInitRootInfo(2, nullptr, 0, &comm), HCCL_E_PTR);
    EXPECT_EQ(HcclGetRootInfo(nullptr), HCCL_E_PTR);
    EXPECT_EQ(comm, nullptr);

    HcclCommConfig config;
    HcclCommConfigInit(&config);
    std::memset(config.reserved + 8, 0, 4);  // magic word
    HcclRootInfo root;
    ASSERT_EQ(HcclGetRootInfo(&root), HCCL_SUCCESS);
    EXPECT_EQ(HcclCommInitRootInfoConfig(1, &root, 0, &config, &comm), HCCL_E_PARA);
    EXPECT_EQ(comm, nullptr);
    HcclCommConfigInit(&config);  // a valid config with an unknown algorithm
    std::strcpy(config.hcclAlgo, "level0:NA;level1:warp-drive");
    EXPECT_EQ(HcclCommInitRootInfoConfig(1, &root, 0, &config, &comm), HCCL_E_PARA);
    EXPECT_EQ(comm, nullptr);

    int32_t devices[3] = {0, 1, 1};
    HcclComm comms[3] = {nullptr, nullptr, nullptr};
    EXPECT_EQ(HcclCommInitAll(0, devices, comms), HCCL_E_PARA);
    EXPECT_EQ(HcclCommInitAll(3, devices, comms), HCCL_E_PARA);  // duplicate device
    devices[2] = 100000;
    EXPECT_EQ(HcclCommInitAll(3, devices, comms), HCCL_E_PARA);
    EXPECT_EQ(HcclCommInitAll(3, nullptr, comms), HCCL_E_PTR);
    EXPECT_EQ(comms[0], nullptr);
}

TEST(BadInput, RankTableFiles) {
    HcclComm comm = nullptr;
    EXPECT_EQ(HcclCommInitClusterInfo("/nonexistent/rank_table.json", 0, &comm), HCCL_E_OPEN_FILE_FAILURE);
    EXPECT_EQ(HcclCommInitClusterInfo(nullptr, 0, &comm), HCCL_E_PTR);
    EXPECT_EQ(HcclCommInitClusterInfo("/tmp", 0, &comm), HCCL_E_OPEN_FILE_FAILURE);  // unreadable: a directory
    std::string longPath(5000, 'a');
    EXPECT_EQ(HcclCommInitClusterInfo(longPath.c_str(), 0, &comm), HCCL_E_PARA);
    std::string path = "/tmp/hostccl-bad-table-" + std::to_string(getpid()) + ".json";
    std::ofstream(path) << "{\"status\":\"completed\",";
    EXPECT_EQ(HcclCommInitClusterInfo(path.c_str(), 0, &comm), HCCL_E_PARA);
    std::ofstream(path) << R"({"status":"initializing","version":"1.0","server_count":"1","server_list":[
        {"server_id":"a","device":[{"device_id":"0","rank_id":"0"}]}]})";
    EXPECT_EQ(HcclCommInitClusterInfo(path.c_str(), 0, &comm), HCCL_E_PARA);
    std::ofstream(path) << R"({"status":"completed","version":"1.0","server_count":"1","server_list":[
        {"server_id":"a","device":[{"device_id":"0","rank_id":"0"}]}]})";
    EXPECT_EQ(HcclCommInitClusterInfo(path.c_str(), 3, &comm), HCCL_E_PARA);  // rank not in the table
    EXPECT_EQ(comm, nullptr);
    std::remove(path.c_str());
}

TEST(BadInput, SubCommunicatorArguments) {
    World& w = pair();
    HcclComm parent = w.comm(0), sub = nullptr;
    uint32_t unsorted[2] = {1, 0}, others[1] = {1};
    EXPECT_EQ(HcclCreateSubCommConfig(&parent, 2, unsorted, 1, 0, nullptr, &sub), HCCL_E_PARA);
    EXPECT_EQ(HcclCreateSubCommConfig(&parent, 1, others, 1, 0, nullptr, &sub), HCCL_E_PARA);  // not a member
    EXPECT_EQ(HcclCreateSubCommConfig(&parent, 3, unsorted, 1, 0, nullptr, &sub), HCCL_E_PARA);
    EXPECT_EQ(HcclCreateSubCommConfig(nullptr, 1, others, 1, 0, nullptr, &sub), HCCL_E_PTR);
    EXPECT_EQ(sub, nullptr);
}

TEST(BadInput, ErrorStrings) {
    EXPECT_STREQ(HcclGetErrorString(HCCL_SUCCESS), "no error");
    EXPECT_STREQ(HcclGetErrorString(HCCL_E_TIMEOUT), "timeout");
    EXPECT_STREQ(HcclGetErrorString(HCCL_E_REMOTE), "error cqe");
    EXPECT_STREQ(HcclGetErrorString(static_cast<HcclResult>(777)), "unknown error");
    EXPECT_EQ(HcclGetCommConfigCapability(), uint32_t(HCCL_COMM_CONFIG_RESERVED));
}

// Ranks that disagree on the op fail (on both sides), promptly, instead of hanging;
// the communicator then reports the error and refuses further work.
TEST(BadInput, MismatchedOperationsFailInsteadOfHanging) {
    World w(2);
    ASSERT_TRUE(w.ok());
    std::vector<std::vector<int32_t>> v(2, std::vector<int32_t>(12, 1));
    auto start = std::chrono::steady_clock::now();
    auto rcs = w.run([&](uint32_t r) {
        uint64_t count = r == 0 ? 10 : 12;
        HcclAllReduce(v[r].data(), v[r].data(), count, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, w.comm(r), w.stream(r));
        return aclrtSynchronizeStream(w.stream(r));
    });
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
    for (uint32_t r = 0; r < 2; ++r) {
        EXPECT_TRUE(rcs[r] == HCCL_E_PARA || rcs[r] == HCCL_E_TCP_TRANSFER) << "rank " << r << " got " << rcs[r];
        HcclResult async = HCCL_SUCCESS;
        EXPECT_EQ(HcclGetCommAsyncError(w.comm(r), &async), HCCL_SUCCESS);
        EXPECT_EQ(async, rcs[r]);
        int32_t x = 1;
        EXPECT_EQ(HcclAllReduce(&x, &x, 1, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, w.comm(r), w.stream(r)), async);
    }
}

// The same, with the direct algorithms forced on threads of one process, which meet
// on the process board instead of exchanging tagged messages: no rank may touch a
// buffer sized for another op. Counts 10 and 12: the rank with 12 elements would
// read and write past the end of its peer's 10; it must fail first (HCCL_E_PARA on
// both, naming both ops), and the short buffer's guard elements stay untouched.
TEST(BadInput, MismatchedOperationsOnTheProcessBoardFailWithoutTouchingMemory) {
    ASSERT_EQ(setenv("HCCL_ALGO", "level1:direct", 1), 0);
    World w(3);
    unsetenv("HCCL_ALGO");
    ASSERT_TRUE(w.ok());
    constexpr int32_t kGuard = -7;
    std::vector<std::vector<int32_t>> v(3, std::vector<int32_t>(16, 1));
    for (int i = 10; i < 16; ++i) v[0][i] = kGuard;  // rank 0's op covers 10 elements
    auto start = std::chrono::steady_clock::now();
    auto rcs = w.run([&](uint32_t r) {
        const uint64_t count = r == 0 ? 10 : 12;
        HcclAllReduce(v[r].data(), v[r].data(), count, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, w.comm(r), w.stream(r));
        return aclrtSynchronizeStream(w.stream(r));
    });
    EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
    for (uint32_t r = 0; r < 3; ++r) EXPECT_EQ(rcs[r], HCCL_E_PARA) << "rank " << r;
    for (int i = 10; i < 16; ++i) EXPECT_EQ(v[0][i], kGuard) << "rank 0's element " << i << " was written";
}

// Different collectives at once, neither reading the other's buffers (a broadcast's
// root reads nothing; an allreduce's rank with no block reads nothing): the check of
// the next rank around still catches the disagreement on some rank, and every rank fails.
TEST(BadInput, DifferentCollectivesOnTheProcessBoardFailOnEveryRank) {
    ASSERT_EQ(setenv("HCCL_ALGO", "level1:direct", 1), 0);
    World w(2);
    unsetenv("HCCL_ALGO");
    ASSERT_TRUE(w.ok());
    std::vector<std::vector<int32_t>> v(2, std::vector<int32_t>(1, 5));
    auto rcs = w.run([&](uint32_t r) {
        if (r == 0)
            HcclBroadcast(v[r].data(), 1, HCCL_DATA_TYPE_INT32, 0, w.comm(r), w.stream(r));
        else  // one element over two ranks: rank 1 owns no block and reads nothing
            HcclAllReduce(v[r].data(), v[r].data(), 1, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, w.comm(r), w.stream(r));
        return aclrtSynchronizeStream(w.stream(r));
    });
    for (uint32_t r = 0; r < 2; ++r) EXPECT_NE(rcs[r], 0) << "rank " << r << " did not notice";
}

// A rank that never arrives: init gives up after HCCL_CONNECT_TIMEOUT with
// HCCL_E_TIMEOUT instead of waiting forever.
TEST(BadInput, InitIsBoundedByTheConnectTimeout) {
    setenv("HCCL_CONNECT_TIMEOUT", "2", 1);
    HcclRootInfo root;
    ASSERT_EQ(HcclGetRootInfo(&root), HCCL_SUCCESS);
    HcclComm comm = nullptr;
    auto start = std::chrono::steady_clock::now();
    EXPECT_EQ(HcclCommInitRootInfo(2, &root, 0, &comm), HCCL_E_TIMEOUT);  // rank 1 never comes
    auto took = std::chrono::steady_clock::now() - start;
    unsetenv("HCCL_CONNECT_TIMEOUT");
    EXPECT_EQ(comm, nullptr);
    EXPECT_GE(took, std::chrono::milliseconds(1900));
    EXPECT_LT(took, std::chrono::seconds(10));
}

// HOSTCCL_TRANSPORT=rdma on a machine without an RDMA device: init fails on every
// rank with HCCL_E_ROCE_CONNECT (naming the reason), no rank waits for the other.
TEST(BadInput, RdmaForcedWithoutADeviceFailsInit) {
    DIR* devices = opendir("/sys/class/infiniband");
    bool any = false;
    if (devices != nullptr) {
        while (dirent* d = readdir(devices)) any |= d->d_name[0] != '.';
        closedir(devices);
    }
    if (any) GTEST_SKIP() << "this machine has an RDMA device: forcing RDMA would succeed";
    setenv("HOSTCCL_TRANSPORT", "rdma", 1);
    const auto start = std::chrono::steady_clock::now();
    World w(2);
    const auto took = std::chrono::steady_clock::now() - start;
    unsetenv("HOSTCCL_TRANSPORT");
    EXPECT_EQ(w.initResult(), HCCL_E_ROCE_CONNECT);
    EXPECT_FALSE(w.ok());
    // Refused once, for good: not dialed again (a redial raced the peer's own attempt
    // and read as a second claim on the rank, HCCL_E_INTERNAL), and the cause is not
    // awaited from the peer, which sees it too (that wait is 2 s).
    EXPECT_LT(took, std::chrono::milliseconds(1500));
}
