// Every operator x dtype x reduce op x in-place/out-of-place x rank count, with
// exact expected values; ranks are threads of this process (HcclCommInitAll).
#include <gtest/gtest.h>

#include <map>
#include <memory>
#include <numeric>

#include "tests/support/values.h"
#include "tests/support/world.h"

using namespace hostccl;
using namespace hostccl::test;

namespace {

const std::vector<uint64_t> kCounts = {0, 1, 7, 1000};  // includes counts not divisible by n

// One World per rank count, shared by the tests (init is the slow part).
World& world(uint32_t n) {
    static std::map<uint32_t, std::unique_ptr<World>> worlds;
    auto& w = worlds[n];
    if (!w) w = std::make_unique<World>(n);
    return *w;
}

int sync(HcclResult rc, aclrtStream s) {
    if (rc != HCCL_SUCCESS) return rc;
    return aclrtSynchronizeStream(s);
}

std::string label(HcclDataType t, uint64_t count, bool inPlace, const char* op = "") {
    return std::string(dtypeName(t)) + " " + op + " count " + std::to_string(count) + (inPlace ? " in-place" : "");
}

void expectAllOk(const std::vector<int>& rcs) {
    for (size_t r = 0; r < rcs.size(); ++r) EXPECT_EQ(rcs[r], 0) << "rank " << r;
}

class Collectives : public ::testing::TestWithParam<uint32_t> {
protected:
    World& w() { return world(GetParam()); }
    uint32_t n() { return GetParam(); }
    void SetUp() override { ASSERT_TRUE(w().ok()) << "HcclCommInitAll failed: " << w().initResult(); }
};

TEST_P(Collectives, AllReduce) {
    for (HcclDataType t : reducibleTypes())
        for (HcclReduceOp op : allOps())
            for (uint64_t count : kCounts)
                for (bool inPlace : {false, true}) {
                    SCOPED_TRACE(label(t, count, inPlace, reduceOpName(op)));
                    std::vector<std::vector<char>> send(n()), recv(n());
                    for (uint32_t r = 0; r < n(); ++r) {
                        send[r] = buffer(t, count);
                        recv[r] = buffer(t, count);
                        for (uint64_t i = 0; i < count; ++i) store(t, send[r].data(), i, input(op, r, i));
                    }
                    expectAllOk(w().run([&](uint32_t r) {
                        void* out = inPlace ? send[r].data() : recv[r].data();
                        return sync(HcclAllReduce(send[r].data(), out, count, t, op, w().comm(r), w().stream(r)),
                                    w().stream(r));
                    }));
                    for (uint32_t r = 0; r < n(); ++r) {
                        const char* out = inPlace ? send[r].data() : recv[r].data();
                        for (uint64_t i = 0; i < count; ++i)
                            ASSERT_EQ(load(t, out, i), reduced(op, n(), i)) << "rank " << r << " element " << i;
                    }
                }
}

TEST_P(Collectives, Reduce) {
    const uint32_t root = n() - 1;
    for (HcclDataType t : reducibleTypes())
        for (HcclReduceOp op : allOps())
            for (uint64_t count : kCounts)
                for (bool inPlace : {false, true}) {
                    SCOPED_TRACE(label(t, count, inPlace, reduceOpName(op)));
                    std::vector<std::vector<char>> send(n()), recv(n());
                    for (uint32_t r = 0; r < n(); ++r) {
                        send[r] = buffer(t, count);
                        recv[r] = buffer(t, count);
                        for (uint64_t i = 0; i < count; ++i) store(t, send[r].data(), i, input(op, r, i));
                    }
                    expectAllOk(w().run([&](uint32_t r) {
                        void* out = inPlace ? send[r].data() : recv[r].data();
                        return sync(HcclReduce(send[r].data(), out, count, t, op, root, w().comm(r), w().stream(r)),
                                    w().stream(r));
                    }));
                    const char* out = inPlace ? send[root].data() : recv[root].data();
                    for (uint64_t i = 0; i < count; ++i) ASSERT_EQ(load(t, out, i), reduced(op, n(), i)) << i;
                    for (uint32_t r = 0; r < n(); ++r) {  // inputs are never modified
                        if (r == root && inPlace) continue;
                        for (uint64_t i = 0; i < count; ++i) ASSERT_EQ(load(t, send[r].data(), i), input(op, r, i));
                    }
                }
}

TEST_P(Collectives, ReduceScatter) {
    for (HcclDataType t : reducibleTypes())
        for (HcclReduceOp op : allOps())
            for (uint64_t count : kCounts)
                for (bool inPlace : {false, true}) {
                    SCOPED_TRACE(label(t, count, inPlace, reduceOpName(op)));
                    const size_t es = dtypeSize(t);
                    std::vector<std::vector<char>> send(n()), recv(n());
                    for (uint32_t r = 0; r < n(); ++r) {
                        send[r] = buffer(t, count * n());
                        recv[r] = buffer(t, count);
                        for (uint64_t i = 0; i < count * n(); ++i) store(t, send[r].data(), i, input(op, r, i));
                    }
                    // In place, the result lands on the rank's own block of the input.
                    auto out = [&](uint32_t r) { return inPlace ? send[r].data() + r * count * es : recv[r].data(); };
                    expectAllOk(w().run([&](uint32_t r) {
                        return sync(HcclReduceScatter(send[r].data(), out(r), count, t, op, w().comm(r), w().stream(r)),
                                    w().stream(r));
                    }));
                    for (uint32_t r = 0; r < n(); ++r)
                        for (uint64_t i = 0; i < count; ++i)
                            ASSERT_EQ(load(t, out(r), i), reduced(op, n(), r * count + i)) << "rank " << r << " el " << i;
                }
}

TEST_P(Collectives, ReduceScatterV) {
    for (HcclDataType t : reducibleTypes())
        for (HcclReduceOp op : allOps()) {
            SCOPED_TRACE(label(t, 0, false, reduceOpName(op)));
            // Block r has r+1 elements (rank 0 gets 1, ...), with a gap of 2 between blocks.
            std::vector<uint64_t> counts(n()), displs(n());
            uint64_t off = 0;
            for (uint32_t r = 0; r < n(); ++r) {
                counts[r] = (r * 3) % 5 + (r == 1 ? 0 : 1);  // includes an empty block when n > 1
                displs[r] = off;
                off += counts[r] + 2;
            }
            std::vector<std::vector<char>> send(n()), recv(n());
            for (uint32_t r = 0; r < n(); ++r) {
                send[r] = buffer(t, off);
                recv[r] = buffer(t, counts[r]);
                for (uint64_t i = 0; i < off; ++i) store(t, send[r].data(), i, input(op, r, i));
            }
            expectAllOk(w().run([&](uint32_t r) {
                return sync(HcclReduceScatterV(send[r].data(), counts.data(), displs.data(), recv[r].data(), counts[r],
                                               t, op, w().comm(r), w().stream(r)),
                            w().stream(r));
            }));
            for (uint32_t r = 0; r < n(); ++r)
                for (uint64_t i = 0; i < counts[r]; ++i)
                    ASSERT_EQ(load(t, recv[r].data(), i), reduced(op, n(), displs[r] + i)) << "rank " << r;
        }
}

TEST_P(Collectives, Broadcast) {
    for (HcclDataType t : allTypes())
        for (uint64_t count : kCounts)
            for (uint32_t root : {0u, n() / 2, n() - 1}) {
                SCOPED_TRACE(label(t, count, false) + " root " + std::to_string(root));
                std::vector<std::vector<char>> buf(n());
                for (uint32_t r = 0; r < n(); ++r) {
                    buf[r] = buffer(t, count);
                    for (uint64_t i = 0; i < count; ++i) store(t, buf[r].data(), i, r == root ? payload(r, i) : 0);
                }
                expectAllOk(w().run([&](uint32_t r) {
                    return sync(HcclBroadcast(buf[r].data(), count, t, root, w().comm(r), w().stream(r)), w().stream(r));
                }));
                for (uint32_t r = 0; r < n(); ++r)
                    for (uint64_t i = 0; i < count; ++i) ASSERT_EQ(load(t, buf[r].data(), i), payload(root, i)) << r;
            }
}

TEST_P(Collectives, AllGather) {
    for (HcclDataType t : allTypes())
        for (uint64_t count : kCounts)
            for (bool inPlace : {false, true}) {
                SCOPED_TRACE(label(t, count, inPlace));
                const size_t es = dtypeSize(t);
                std::vector<std::vector<char>> send(n()), recv(n());
                for (uint32_t r = 0; r < n(); ++r) {
                    send[r] = buffer(t, count);
                    recv[r] = buffer(t, count * n());
                    char* in = inPlace ? recv[r].data() + r * count * es : send[r].data();
                    for (uint64_t i = 0; i < count; ++i) store(t, in, i, payload(r, i));
                }
                expectAllOk(w().run([&](uint32_t r) {
                    void* in = inPlace ? recv[r].data() + r * count * es : send[r].data();
                    return sync(HcclAllGather(in, recv[r].data(), count, t, w().comm(r), w().stream(r)), w().stream(r));
                }));
                for (uint32_t r = 0; r < n(); ++r)
                    for (uint32_t src = 0; src < n(); ++src)
                        for (uint64_t i = 0; i < count; ++i)
                            ASSERT_EQ(load(t, recv[r].data(), src * count + i), payload(src, i)) << r << " from " << src;
            }
}

TEST_P(Collectives, AllGatherV) {
    for (HcclDataType t : allTypes()) {
        SCOPED_TRACE(dtypeName(t));
        std::vector<uint64_t> counts(n()), displs(n());
        uint64_t off = 0;
        for (uint32_t r = 0; r < n(); ++r) {
            counts[r] = (r % 3 == 1) ? 0 : r + 2;
            displs[r] = off + 1;  // a one-element gap before each block
            off += counts[r] + 1;
        }
        std::vector<std::vector<char>> send(n()), recv(n());
        for (uint32_t r = 0; r < n(); ++r) {
            send[r] = buffer(t, counts[r]);
            recv[r] = buffer(t, off);
            for (uint64_t i = 0; i < counts[r]; ++i) store(t, send[r].data(), i, payload(r, i));
        }
        expectAllOk(w().run([&](uint32_t r) {
            return sync(HcclAllGatherV(send[r].data(), counts[r], recv[r].data(), counts.data(), displs.data(), t,
                                       w().comm(r), w().stream(r)),
                        w().stream(r));
        }));
        for (uint32_t r = 0; r < n(); ++r)
            for (uint32_t src = 0; src < n(); ++src)
                for (uint64_t i = 0; i < counts[src]; ++i)
                    ASSERT_EQ(load(t, recv[r].data(), displs[src] + i), payload(src, i)) << r << " from " << src;
    }
}

TEST_P(Collectives, Scatter) {
    for (HcclDataType t : allTypes())
        for (uint64_t count : kCounts) {
            const uint32_t root = n() / 2;
            SCOPED_TRACE(label(t, count, false));
            std::vector<std::vector<char>> send(n()), recv(n());
            for (uint32_t r = 0; r < n(); ++r) {
                send[r] = buffer(t, count * n());
                recv[r] = buffer(t, count);
            }
            for (uint32_t dst = 0; dst < n(); ++dst)
                for (uint64_t i = 0; i < count; ++i) store(t, send[root].data(), dst * count + i, payload(dst, i));
            expectAllOk(w().run([&](uint32_t r) {
                return sync(HcclScatter(send[r].data(), recv[r].data(), count, t, root, w().comm(r), w().stream(r)),
                            w().stream(r));
            }));
            for (uint32_t r = 0; r < n(); ++r)
                for (uint64_t i = 0; i < count; ++i) ASSERT_EQ(load(t, recv[r].data(), i), payload(r, i)) << r;
        }
}

// Rank s sends (s, d, i) to rank d: payload(s * n + d, i).
TEST_P(Collectives, AlltoAll) {
    for (HcclDataType t : allTypes())
        for (uint64_t count : kCounts) {
            SCOPED_TRACE(label(t, count, false));
            std::vector<std::vector<char>> send(n()), recv(n());
            for (uint32_t r = 0; r < n(); ++r) {
                send[r] = buffer(t, count * n());
                recv[r] = buffer(t, count * n());
                for (uint32_t d = 0; d < n(); ++d)
                    for (uint64_t i = 0; i < count; ++i) store(t, send[r].data(), d * count + i, payload(r * n() + d, i));
            }
            expectAllOk(w().run([&](uint32_t r) {
                return sync(HcclAlltoAll(send[r].data(), count, t, recv[r].data(), count, t, w().comm(r), w().stream(r)),
                            w().stream(r));
            }));
            for (uint32_t r = 0; r < n(); ++r)
                for (uint32_t s = 0; s < n(); ++s)
                    for (uint64_t i = 0; i < count; ++i)
                        ASSERT_EQ(load(t, recv[r].data(), s * count + i), payload(s * n() + r, i)) << r << " from " << s;
        }
}

// Rank s sends s+d+1 elements to rank d (d+s+1 differs per pair), densely packed.
TEST_P(Collectives, AlltoAllVAndVC) {
    for (HcclDataType t : allTypes())
        for (bool matrixForm : {false, true}) {
            SCOPED_TRACE(std::string(dtypeName(t)) + (matrixForm ? " VC" : " V"));
            auto amount = [&](uint32_t s, uint32_t d) -> uint64_t { return (s + 2 * d) % 4; };  // 0..3, some empty
            std::vector<uint64_t> matrix(n() * n());
            for (uint32_t s = 0; s < n(); ++s)
                for (uint32_t d = 0; d < n(); ++d) matrix[s * n() + d] = amount(s, d);
            std::vector<std::vector<char>> send(n()), recv(n());
            std::vector<std::vector<uint64_t>> sc(n()), sd(n()), rc(n()), rd(n());
            for (uint32_t r = 0; r < n(); ++r) {
                uint64_t so = 0, ro = 0;
                for (uint32_t p = 0; p < n(); ++p) {
                    sc[r].push_back(amount(r, p));
                    sd[r].push_back(so);
                    so += amount(r, p);
                    rc[r].push_back(amount(p, r));
                    rd[r].push_back(ro);
                    ro += amount(p, r);
                }
                send[r] = buffer(t, so);
                recv[r] = buffer(t, ro);
                for (uint32_t p = 0; p < n(); ++p)
                    for (uint64_t i = 0; i < sc[r][p]; ++i) store(t, send[r].data(), sd[r][p] + i, payload(r * n() + p, i));
            }
            expectAllOk(w().run([&](uint32_t r) {
                HcclResult rc0 = matrixForm
                                     ? HcclAlltoAllVC(send[r].data(), matrix.data(), t, recv[r].data(), t, w().comm(r),
                                                      w().stream(r))
                                     : HcclAlltoAllV(send[r].data(), sc[r].data(), sd[r].data(), t, recv[r].data(),
                                                     rc[r].data(), rd[r].data(), t, w().comm(r), w().stream(r));
                return sync(rc0, w().stream(r));
            }));
            for (uint32_t r = 0; r < n(); ++r)
                for (uint32_t s = 0; s < n(); ++s)
                    for (uint64_t i = 0; i < rc[r][s]; ++i)
                        ASSERT_EQ(load(t, recv[r].data(), rd[r][s] + i), payload(s * n() + r, i)) << r << " from " << s;
        }
}

// Ring of Send/Recv: even ranks send first, odd ranks receive first; then the
// same exchange as one BatchSendRecv per rank.
TEST_P(Collectives, SendRecvAndBatch) {
    if (n() == 1) {  // the only peer would be the rank itself, which HCCL rejects
        float x = 0;
        EXPECT_EQ(HcclSend(&x, 1, HCCL_DATA_TYPE_FP32, 0, w().comm(0), w().stream(0)), HCCL_E_PARA);
        EXPECT_EQ(HcclRecv(&x, 1, HCCL_DATA_TYPE_FP32, 0, w().comm(0), w().stream(0)), HCCL_E_PARA);
        return;
    }
    for (HcclDataType t : allTypes())
        for (uint64_t count : kCounts) {
            SCOPED_TRACE(label(t, count, false));
            std::vector<std::vector<char>> send(n()), recv(n()), recv2(n());
            for (uint32_t r = 0; r < n(); ++r) {
                send[r] = buffer(t, count);
                recv[r] = buffer(t, count);
                recv2[r] = buffer(t, count);
                for (uint64_t i = 0; i < count; ++i) store(t, send[r].data(), i, payload(r, i));
            }
            expectAllOk(w().run([&](uint32_t r) {
                uint32_t next = (r + 1) % n(), prev = (r + n() - 1) % n();
                aclrtStream s = w().stream(r);
                HcclComm c = w().comm(r);
                // With two ranks next == prev; posting order still pairs send with recv.
                if (r % 2 == 0) {
                    if (int e = sync(HcclSend(send[r].data(), count, t, next, c, s), s)) return e;
                    if (int e = sync(HcclRecv(recv[r].data(), count, t, prev, c, s), s)) return e;
                } else {
                    if (int e = sync(HcclRecv(recv[r].data(), count, t, prev, c, s), s)) return e;
                    if (int e = sync(HcclSend(send[r].data(), count, t, next, c, s), s)) return e;
                }
                HcclSendRecvItem items[2] = {{HCCL_SEND, send[r].data(), count, t, next},
                                             {HCCL_RECV, recv2[r].data(), count, t, prev}};
                return sync(HcclBatchSendRecv(items, 2, c, s), s);
            }));
            if (n() % 2 == 1) continue;  // odd rings: first exchange is checked by the batch below
            for (uint32_t r = 0; r < n(); ++r)
                for (uint64_t i = 0; i < count; ++i) {
                    uint32_t prev = (r + n() - 1) % n();
                    ASSERT_EQ(load(t, recv[r].data(), i), payload(prev, i)) << r;
                    ASSERT_EQ(load(t, recv2[r].data(), i), payload(prev, i)) << r;
                }
        }
}

TEST_P(Collectives, BarrierAndBackToBackOps) {
    // Many small ops in a row on one stream, synchronised once at the end.
    std::vector<std::vector<int32_t>> bufs(n(), std::vector<int32_t>(3));
    expectAllOk(w().run([&](uint32_t r) {
        for (int k = 0; k < 20; ++k) {
            bufs[r] = {int32_t(r), 1, k};
            if (HcclBarrier(w().comm(r), w().stream(r)) != HCCL_SUCCESS) return 1;
            if (HcclAllReduce(bufs[r].data(), bufs[r].data(), 3, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, w().comm(r),
                              w().stream(r)) != HCCL_SUCCESS)
                return 2;
            if (int e = aclrtSynchronizeStream(w().stream(r))) return e;
            int32_t want0 = int32_t(n() * (n() - 1) / 2);
            if (bufs[r][0] != want0 || bufs[r][1] != int32_t(n()) || bufs[r][2] != int32_t(n()) * k) return 3;
        }
        return 0;
    }));
}

INSTANTIATE_TEST_SUITE_P(Ranks, Collectives, ::testing::Values(1u, 2u, 3u, 4u, 5u, 8u),
                         [](const auto& info) { return std::to_string(info.param) + "ranks"; });

}  // namespace
