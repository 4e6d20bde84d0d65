// The C++ API (include/hostccl/hostccl.hpp): communicators made three ways, async
// collectives and their Work handles (test, wait with timeout, errors), use from
// several threads, sub-communicators. Ranks are threads of this process.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <numeric>
#include <thread>

#include "on_ranks.h"
#include "hostccl/hostccl.hpp"

using namespace std::chrono_literals;
using hostccl::Communicator;
using hostccl::Work;

using hostccl::test::onRanks;

TEST(CxxApi, AsyncAllReduceManyInFlight) {
    const uint32_t n = 4;
    onRanks(n, [&](uint32_t r, Communicator& comm) {
        EXPECT_EQ(comm.rank(), r);
        EXPECT_EQ(comm.size(), n);
        // Eight buffers reduced at once, waited for in reverse order.
        std::vector<std::vector<int32_t>> bufs(8, std::vector<int32_t>(1000));
        std::vector<Work> works;
        for (size_t b = 0; b < bufs.size(); ++b) {
            std::iota(bufs[b].begin(), bufs[b].end(), static_cast<int32_t>(r * 10 + b));
            works.push_back(comm.allReduce(std::span<int32_t>(bufs[b])));
        }
        for (size_t b = bufs.size(); b-- > 0;) {
            EXPECT_TRUE(works[b].wait());
            EXPECT_TRUE(works[b].test());
            EXPECT_EQ(works[b].error(), HCCL_SUCCESS);
            // sum over ranks of (10 r + b + i) = 10 * 6 + 4 (b + i)
            for (size_t i = 0; i < bufs[b].size(); ++i)
                ASSERT_EQ(bufs[b][i], static_cast<int32_t>(60 + 4 * (b + i))) << "buffer " << b << " index " << i;
        }
    });
}

TEST(CxxApi, TypedCollectives) {
    const uint32_t n = 3;
    onRanks(n, [&](uint32_t r, Communicator& comm) {
        std::vector<double> mine{double(r), double(r) + 0.5};
        std::vector<double> gathered(2 * n);
        comm.allGather(std::span<const double>(mine), std::span<double>(gathered)).wait();
        for (uint32_t k = 0; k < n; ++k) {
            EXPECT_EQ(gathered[2 * k], k);
            EXPECT_EQ(gathered[2 * k + 1], k + 0.5);
        }
        std::vector<int64_t> blocks(n * 2), part(2);
        for (uint32_t i = 0; i < blocks.size(); ++i) blocks[i] = int64_t(i) * (r + 1);
        comm.reduceScatter(std::span<const int64_t>(blocks), std::span<int64_t>(part), HCCL_REDUCE_MAX).wait();
        EXPECT_EQ(part[0], int64_t(2 * r) * n);
        EXPECT_EQ(part[1], int64_t(2 * r + 1) * n);
        std::vector<float> b(5, r == 1 ? 7.25f : 0.f);
        comm.broadcast(std::span<float>(b), 1).wait();
        EXPECT_EQ(b, std::vector<float>(5, 7.25f));
        std::vector<uint8_t> in(n * 3), out(n * 3);
        for (uint32_t i = 0; i < in.size(); ++i) in[i] = uint8_t(r * 100 + i);
        comm.allToAll(in.data(), out.data(), 3, HCCL_DATA_TYPE_UINT8).wait();
        for (uint32_t src = 0; src < n; ++src)
            for (uint32_t j = 0; j < 3; ++j) EXPECT_EQ(out[src * 3 + j], uint8_t(src * 100 + r * 3 + j));
        int32_t v = int32_t(r) + 1, total = 0;
        comm.reduce(&v, &total, 1, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_PROD, 2).wait();
        if (r == 2) {
            EXPECT_EQ(total, 6);
        }
        comm.barrier().wait();
        // A ring of send/recv pairs (even ranks send first).
        std::vector<uint16_t> token(4, uint16_t(r)), got(4);
        uint32_t next = (r + 1) % n, prev = (r + n - 1) % n;
        Work s = comm.send(std::span<const uint16_t>(token), next);
        Work g = comm.recv(std::span<uint16_t>(got), prev);
        s.wait();
        g.wait();
        EXPECT_EQ(got, std::vector<uint16_t>(4, uint16_t(prev)));
        comm.synchronize();
    });
}

// Communicator::launch queues a C call without a method of its own (here an uneven
// all-to-all) and completes a Work; a call refused for its arguments throws its code.
TEST(CxxApi, LaunchQueuesAnyCallOfTheCApi) {
    const uint32_t n = 3;
    onRanks(n, [&](uint32_t r, Communicator& comm) {
        // Rank r sends (r + 1) elements to every peer; rank p's block from r is r + 1 long.
        std::vector<uint64_t> sendCounts(n, r + 1), sendDispls(n), recvCounts(n), recvDispls(n);
        for (uint32_t p = 0; p < n; ++p) {
            sendDispls[p] = p * (r + 1);
            recvCounts[p] = p + 1;
            recvDispls[p] = p == 0 ? 0 : recvDispls[p - 1] + recvCounts[p - 1];
        }
        std::vector<int32_t> in(n * (r + 1)), out(recvDispls[n - 1] + recvCounts[n - 1], -1);
        for (uint32_t i = 0; i < in.size(); ++i) in[i] = int32_t(1000 * r + i);
        Work w = comm.launch("HcclAlltoAllV", [&](HcclComm c, aclrtStream s) {
            return HcclAlltoAllV(in.data(), sendCounts.data(), sendDispls.data(), HCCL_DATA_TYPE_INT32, out.data(),
                                 recvCounts.data(), recvDispls.data(), HCCL_DATA_TYPE_INT32, c, s);
        });
        EXPECT_TRUE(w.wait());
        for (uint32_t p = 0; p < n; ++p)
            for (uint32_t j = 0; j < p + 1; ++j)
                EXPECT_EQ(out[recvDispls[p] + j], int32_t(1000 * p + r * (p + 1) + j)) << "from " << p << " index " << j;
        try {
            comm.launch("HcclBroadcast", [&](HcclComm c, aclrtStream s) {
                return HcclBroadcast(in.data(), 1, HCCL_DATA_TYPE_INT32, n + 5, c, s);  // no such root
            });
            ADD_FAILURE() << "a refused launch must throw";
        } catch (const hostccl::Error& e) {
            EXPECT_EQ(e.code(), HCCL_E_PARA) << e.what();
        }
        comm.synchronize();
    });
}

// Work::test and a timed wait report an op that cannot finish yet, without blocking.
TEST(CxxApi, WaitTimesOutWhileThePeerIsLate) {
    onRanks(2, [&](uint32_t r, Communicator& comm) {
        std::vector<float> data(16, r == 0 ? 3.f : 0.f);
        if (r == 1) {
            Work w = comm.recv(std::span<float>(data), 0);
            EXPECT_FALSE(w.test());
            EXPECT_FALSE(w.wait(50ms));  // rank 0 sends only after 300 ms
            EXPECT_TRUE(w.wait(10s));
            EXPECT_EQ(data, std::vector<float>(16, 3.f));
            EXPECT_GT(w.runMs(), 200.0);
        } else {
            std::this_thread::sleep_for(300ms);
            comm.send(std::span<const float>(data), 1).wait();
        }
    });
}

// Issued from one thread, waited for on another; issued from two threads in turn.
TEST(CxxApi, UsableFromAnyThread) {
    onRanks(2, [&](uint32_t r, Communicator& comm) {
        std::vector<int32_t> a(100, int32_t(r + 1)), b(100, int32_t(r + 3));
        Work wa;
        std::thread issuer([&] { wa = comm.allReduce(std::span<int32_t>(a)); });
        issuer.join();
        std::thread other([&] { comm.allReduce(std::span<int32_t>(b), HCCL_REDUCE_MIN).wait(); });
        wa.wait();
        other.join();
        EXPECT_EQ(a, std::vector<int32_t>(100, 3));
        EXPECT_EQ(b, std::vector<int32_t>(100, 3));
    });
}

// Bad arguments throw with the precise code and queue nothing: the next op works.
TEST(CxxApi, BadArgumentsThrowAndChangeNothing) {
    onRanks(2, [&](uint32_t r, Communicator& comm) {
        std::vector<float> x(8, 1.f), y(7);
        try {
            comm.allReduce(std::span<const float>(x), std::span<float>(y));
            ADD_FAILURE() << "size mismatch accepted";
        } catch (const hostccl::Error& e) {
            EXPECT_EQ(e.code(), HCCL_E_PARA);
        }
        try {
            comm.broadcast(std::span<float>(x), 5);  // no rank 5
            ADD_FAILURE() << "root 5 accepted";
        } catch (const hostccl::Error& e) {
            EXPECT_EQ(e.code(), HCCL_E_PARA);
            EXPECT_NE(std::string(e.what()).find("HcclBroadcast"), std::string::npos) << e.what();
        }
        EXPECT_THROW(comm.allReduce(nullptr, nullptr, 4, HCCL_DATA_TYPE_FP32), hostccl::Error);
        EXPECT_THROW(comm.split({1 - r}, 7), hostccl::Error);  // this rank is not a member
        comm.allReduce(std::span<float>(x)).wait();
        EXPECT_EQ(x, std::vector<float>(8, 2.f));
    });
}

// An op that fails while running reports through its Work and the failure record.
TEST(CxxApi, FailedOpReportsThroughItsWork) {
    onRanks(2, [&](uint32_t r, Communicator& comm) {
        if (r == 0) {
            std::vector<float> data(4);
            Work w = comm.recv(std::span<float>(data), 1);  // rank 1 aborts instead of sending
            try {
                w.wait(30s);
                ADD_FAILURE() << "recv from an aborted peer succeeded";
            } catch (const hostccl::Error& e) {
                EXPECT_EQ(e.code(), HCCL_E_REMOTE) << e.what();
            }
            EXPECT_EQ(w.error(), HCCL_E_REMOTE);
            EXPECT_EQ(comm.failure().code, HCCL_E_REMOTE);
            EXPECT_EQ(comm.failure().rank, 1);
            EXPECT_THROW(comm.barrier(), hostccl::Error);  // refused at once: the communicator failed
        } else {
            std::this_thread::sleep_for(100ms);
            comm.abort();
            EXPECT_THROW(comm.barrier(), hostccl::Error);
        }
    });
}

TEST(CxxApi, SplitIntoGroups) {
    const uint32_t n = 4;
    onRanks(n, [&](uint32_t r, Communicator& comm) {
        // Even and odd ranks; each group sums its members' ranks.
        std::vector<uint32_t> members = r % 2 == 0 ? std::vector<uint32_t>{0, 2} : std::vector<uint32_t>{1, 3};
        Communicator group = comm.split(members, r % 2);
        EXPECT_EQ(group.size(), 2u);
        EXPECT_EQ(group.rank(), r / 2);
        int32_t v = int32_t(r);
        group.allReduce(std::span<int32_t>(&v, 1)).wait();
        EXPECT_EQ(v, r % 2 == 0 ? 2 : 4);
        comm.barrier().wait();  // the parent still works beside its group
    });
}

// Ranks listed in any order take their places in the group by position
// (HostcclCommSplit): torch's split_group keeps the caller's order.
TEST(CxxApi, SplitKeepsTheListedOrder) {
    const uint32_t n = 4;
    const std::vector<uint32_t> order{3, 1, 0, 2};
    onRanks(n, [&](uint32_t r, Communicator& comm) {
        Communicator group = comm.split(order, 11);
        const uint32_t place = uint32_t(std::find(order.begin(), order.end(), r) - order.begin());
        EXPECT_EQ(group.rank(), place);
        uint32_t mine = r;
        std::vector<uint32_t> gathered(n);
        group.allGather(&mine, gathered.data(), 1, HCCL_DATA_TYPE_UINT32).wait();
        EXPECT_EQ(gathered, order);  // group rank i is parent rank order[i]
        EXPECT_THROW(comm.split({r, r}, 12), hostccl::Error);  // a rank twice
        EXPECT_THROW(comm.split({r, n}, 13), hostccl::Error);  // outside the parent
    });
}

// A timeout set while the communicator lives bounds the ops that start after it.
TEST(CxxApi, SetExecTimeoutBoundsLaterOps) {
    onRanks(2, [&](uint32_t r, Communicator& comm) {
        EXPECT_THROW(comm.setExecTimeout(-1), hostccl::Error);
        comm.setExecTimeout(1);
        if (r == 0) {
            std::vector<float> data(4);
            const auto start = std::chrono::steady_clock::now();
            Work w = comm.recv(std::span<float>(data), 1);  // rank 1 never sends
            try {
                w.wait(30s);
                ADD_FAILURE() << "recv without a send succeeded";
            } catch (const hostccl::Error& e) {
                EXPECT_EQ(e.code(), HCCL_E_TIMEOUT) << e.what();
            }
            EXPECT_LT(std::chrono::steady_clock::now() - start, 20s);  // 1 s, not the default 1836 s
        } else {
            std::this_thread::sleep_for(4s);  // alive (not failed) while rank 0 times out
        }
    });
}

TEST(CxxApi, FromRankTable) {
    const uint32_t n = 2;
    int port = 20000 + int(getpid() % 12000);
    std::string path = "/tmp/hostccl-cxx-table-" + std::to_string(getpid()) + ".json";
    std::ofstream(path) << R"({"status":"completed","version":"1.0","server_count":"1","server_list":[
        {"server_id":"local","host_ip":"127.0.0.1","device":[
          {"device_id":"0","rank_id":"0","host_port":")"
                        << port << R"("},{"device_id":"1","rank_id":"1","host_port":")" << port + 1 << R"("}]}]})";
    std::vector<std::thread> threads;
    for (uint32_t r = 0; r < n; ++r) {
        threads.emplace_back([&, r] {
            hostccl::CommOptions options;
            options.device = int32_t(r);
            options.name = "from_table";
            Communicator comm = Communicator::fromRankTable(path, r, options);
            EXPECT_EQ(comm.name(), "from_table");
            uint64_t v = r + 5;
            comm.allReduce(std::span<uint64_t>(&v, 1)).wait();
            EXPECT_EQ(v, 11u);
        });
    }
    for (auto& t : threads) t.join();
    std::remove(path.c_str());
}
