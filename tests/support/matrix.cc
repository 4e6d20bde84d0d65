#include "tests/support/matrix.h"

#include <fmt/format.h>

#include <algorithm>

#include "tests/support/values.h"

namespace hostccl::test {

namespace {

// Counts include 0, 1, a count not divisible by most rank counts, and one large
// enough to span several pipeline chunks.
const std::vector<uint64_t> kCounts = {0, 1, 7, 1000};
constexpr uint64_t kLargeElements = 1 << 20;  // 4-8 MB per rank for fp32 / int64

std::string caseName(const char* family, HcclDataType t, const char* op, uint64_t count, bool inPlace) {
    return fmt::format("{} {}{}{} count {}{}", family, dtypeName(t), *op ? " " : "", op, count,
                       inPlace ? " in-place" : "");
}

// Runs the call, synchronises, and reports a failure of either.
std::string runOp(HcclResult enqueued, aclrtStream s) {
    if (enqueued != HCCL_SUCCESS) return fmt::format("enqueue returned {}", HcclGetErrorString(enqueued));
    int rc = aclrtSynchronizeStream(s);
    return rc == 0 ? "" : fmt::format("synchronize returned {}", rc);
}

// First element (if any) where `got(i) != want(i)`.
std::string compare(uint64_t count, const std::function<int64_t(uint64_t)>& got,
                    const std::function<int64_t(uint64_t)>& want) {
    for (uint64_t i = 0; i < count; ++i)
        if (got(i) != want(i)) return fmt::format("element {} is {}, expected {}", i, got(i), want(i));
    return "";
}

// The large case keeps each rank's whole buffer at several MB: families whose
// buffers hold one block per rank (`perRank`) get a count of 1/n of it.
std::vector<uint64_t> countsFor(HcclDataType t, uint32_t n, bool perRank) {
    std::vector<uint64_t> c = kCounts;
    if (t == HCCL_DATA_TYPE_FP32 || t == HCCL_DATA_TYPE_INT64) c.push_back(perRank ? kLargeElements / n + 3 : kLargeElements);
    return c;
}
bool isLarge(uint64_t count) { return count > 1000; }

// Every dtype x op x count x placement; at the large size only sum (the kernels'
// other ops are covered at every small size and by the unit tests).
void addReductions(std::vector<MatrixCase>& out, const char* family, uint32_t n, bool perRank,
                   const std::function<std::string(const RankContext&, HcclDataType, HcclReduceOp, uint64_t, bool)>& f) {
    for (HcclDataType t : reducibleTypes())
        for (HcclReduceOp op : allOps())
            for (uint64_t count : countsFor(t, n, perRank))
                for (bool inPlace : {false, true})
                    if (!isLarge(count) || op == HCCL_REDUCE_SUM)
                        out.push_back({caseName(family, t, reduceOpName(op), count, inPlace),
                                       [=](const RankContext& c) { return f(c, t, op, count, inPlace); },
                                       isLarge(count), t});
}

void addMoves(std::vector<MatrixCase>& out, const char* family, uint32_t n, bool perRank, bool withInPlace,
              const std::function<std::string(const RankContext&, HcclDataType, uint64_t, bool)>& f) {
    for (HcclDataType t : allTypes())
        for (uint64_t count : countsFor(t, n, perRank))
            for (bool inPlace : {false, true}) {
                if (inPlace && !withInPlace) continue;
                out.push_back({caseName(family, t, "", count, inPlace),
                               [=](const RankContext& c) { return f(c, t, count, inPlace); }, isLarge(count), t});
            }
}

std::string allReduce(const RankContext& c, HcclDataType t, HcclReduceOp op, uint64_t count, bool inPlace) {
    auto send = buffer(t, count), recv = buffer(t, count);
    for (uint64_t i = 0; i < count; ++i) store(t, send.data(), i, input(op, c.rank, i));
    char* out = inPlace ? send.data() : recv.data();
    std::string e = runOp(HcclAllReduce(send.data(), out, count, t, op, c.comm, c.stream), c.stream);
    if (!e.empty()) return e;
    return compare(count, [&](uint64_t i) { return load(t, out, i); }, [&](uint64_t i) { return reduced(op, c.size, i); });
}

std::string reduce(const RankContext& c, HcclDataType t, HcclReduceOp op, uint64_t count, bool inPlace) {
    const uint32_t root = c.size - 1;
    auto send = buffer(t, count), recv = buffer(t, count);
    for (uint64_t i = 0; i < count; ++i) store(t, send.data(), i, input(op, c.rank, i));
    char* out = inPlace ? send.data() : recv.data();
    std::string e = runOp(HcclReduce(send.data(), out, count, t, op, root, c.comm, c.stream), c.stream);
    if (!e.empty()) return e;
    if (c.rank == root)
        return compare(count, [&](uint64_t i) { return load(t, out, i); }, [&](uint64_t i) { return reduced(op, c.size, i); });
    // Non-roots' inputs are never modified.
    return compare(count, [&](uint64_t i) { return load(t, send.data(), i); }, [&](uint64_t i) { return input(op, c.rank, i); });
}

std::string reduceScatter(const RankContext& c, HcclDataType t, HcclReduceOp op, uint64_t count, bool inPlace) {
    auto send = buffer(t, count * c.size), recv = buffer(t, count);
    for (uint64_t i = 0; i < count * c.size; ++i) store(t, send.data(), i, input(op, c.rank, i));
    // In place, the result lands on the rank's own block of the input.
    char* out = inPlace ? send.data() + c.rank * count * dtypeSize(t) : recv.data();
    std::string e = runOp(HcclReduceScatter(send.data(), out, count, t, op, c.comm, c.stream), c.stream);
    if (!e.empty()) return e;
    return compare(count, [&](uint64_t i) { return load(t, out, i); },
                   [&](uint64_t i) { return reduced(op, c.size, c.rank * count + i); });
}

// Block r has a rank-dependent size (one block is empty) and a two-element gap follows each block.
void variableLayout(uint32_t n, std::vector<uint64_t>* counts, std::vector<uint64_t>* displs, uint64_t* total) {
    uint64_t off = 0;
    for (uint32_t r = 0; r < n; ++r) {
        counts->push_back((r * 3) % 5 + (r == 1 ? 0 : 1));
        displs->push_back(off);
        off += counts->back() + 2;
    }
    *total = off;
}

std::string reduceScatterV(const RankContext& c, HcclDataType t, HcclReduceOp op, uint64_t, bool) {
    std::vector<uint64_t> counts, displs;
    uint64_t total = 0;
    variableLayout(c.size, &counts, &displs, &total);
    auto send = buffer(t, total), recv = buffer(t, counts[c.rank]);
    for (uint64_t i = 0; i < total; ++i) store(t, send.data(), i, input(op, c.rank, i));
    std::string e = runOp(HcclReduceScatterV(send.data(), counts.data(), displs.data(), recv.data(), counts[c.rank], t,
                                             op, c.comm, c.stream),
                          c.stream);
    if (!e.empty()) return e;
    return compare(counts[c.rank], [&](uint64_t i) { return load(t, recv.data(), i); },
                   [&](uint64_t i) { return reduced(op, c.size, displs[c.rank] + i); });
}

std::string broadcast(const RankContext& c, HcclDataType t, uint64_t count, bool) {
    for (uint32_t root : {0u, c.size / 2, c.size - 1}) {
        auto buf = buffer(t, count);
        for (uint64_t i = 0; i < count; ++i) store(t, buf.data(), i, c.rank == root ? payload(root, i) : 0);
        std::string e = runOp(HcclBroadcast(buf.data(), count, t, root, c.comm, c.stream), c.stream);
        if (e.empty())
            e = compare(count, [&](uint64_t i) { return load(t, buf.data(), i); }, [&](uint64_t i) { return payload(root, i); });
        if (!e.empty()) return fmt::format("root {}: {}", root, e);
    }
    return "";
}

std::string allGather(const RankContext& c, HcclDataType t, uint64_t count, bool inPlace) {
    const size_t es = dtypeSize(t);
    auto send = buffer(t, count), recv = buffer(t, count * c.size);
    char* in = inPlace ? recv.data() + c.rank * count * es : send.data();
    for (uint64_t i = 0; i < count; ++i) store(t, in, i, payload(c.rank, i));
    std::string e = runOp(HcclAllGather(in, recv.data(), count, t, c.comm, c.stream), c.stream);
    if (!e.empty()) return e;
    return compare(count * c.size, [&](uint64_t i) { return load(t, recv.data(), i); },
                   [&](uint64_t i) { return payload(uint32_t(i / count), i % count); });
}

std::string allGatherV(const RankContext& c, HcclDataType t, uint64_t, bool) {
    std::vector<uint64_t> counts, displs;
    uint64_t total = 0;
    variableLayout(c.size, &counts, &displs, &total);
    auto send = buffer(t, counts[c.rank]), recv = buffer(t, total);
    for (uint64_t i = 0; i < counts[c.rank]; ++i) store(t, send.data(), i, payload(c.rank, i));
    std::string e = runOp(HcclAllGatherV(send.data(), counts[c.rank], recv.data(), counts.data(), displs.data(), t,
                                         c.comm, c.stream),
                          c.stream);
    for (uint32_t src = 0; src < c.size && e.empty(); ++src)
        e = compare(counts[src], [&](uint64_t i) { return load(t, recv.data(), displs[src] + i); },
                    [&](uint64_t i) { return payload(src, i); });
    return e;
}

std::string scatter(const RankContext& c, HcclDataType t, uint64_t count, bool) {
    const uint32_t root = c.size / 2;
    auto send = buffer(t, count * c.size), recv = buffer(t, count);
    if (c.rank == root)
        for (uint64_t i = 0; i < count * c.size; ++i) store(t, send.data(), i, payload(uint32_t(i / count), i % count));
    std::string e = runOp(HcclScatter(send.data(), recv.data(), count, t, root, c.comm, c.stream), c.stream);
    if (!e.empty()) return e;
    return compare(count, [&](uint64_t i) { return load(t, recv.data(), i); }, [&](uint64_t i) { return payload(c.rank, i); });
}

// Rank s sends payload(s * n + d, i) to rank d; `amount(s, d)` elements per pair.
std::string alltoallv(const RankContext& c, HcclDataType t, int form, uint64_t uniformCount) {
    const uint32_t n = c.size, me = c.rank;
    auto amount = [&](uint32_t s, uint32_t d) -> uint64_t { return form == 0 ? uniformCount : (s + 2 * d) % 4; };
    std::vector<uint64_t> sc, sd, rc, rd, matrix;
    uint64_t so = 0, ro = 0;
    for (uint32_t p = 0; p < n; ++p) {
        sc.push_back(amount(me, p)), sd.push_back(so), so += sc.back();
        rc.push_back(amount(p, me)), rd.push_back(ro), ro += rc.back();
    }
    for (uint32_t s = 0; s < n; ++s)
        for (uint32_t d = 0; d < n; ++d) matrix.push_back(amount(s, d));
    auto send = buffer(t, so), recv = buffer(t, ro);
    for (uint32_t p = 0; p < n; ++p)
        for (uint64_t i = 0; i < sc[p]; ++i) store(t, send.data(), sd[p] + i, payload(me * n + p, i));
    HcclResult rc0 = form == 0   ? HcclAlltoAll(send.data(), uniformCount, t, recv.data(), uniformCount, t, c.comm, c.stream)
                     : form == 1 ? HcclAlltoAllV(send.data(), sc.data(), sd.data(), t, recv.data(), rc.data(), rd.data(),
                                                 t, c.comm, c.stream)
                                 : HcclAlltoAllVC(send.data(), matrix.data(), t, recv.data(), t, c.comm, c.stream);
    std::string e = runOp(rc0, c.stream);
    for (uint32_t s = 0; s < n && e.empty(); ++s)
        e = compare(rc[s], [&](uint64_t i) { return load(t, recv.data(), rd[s] + i); },
                    [&](uint64_t i) { return payload(s * n + me, i); });
    return e;
}

// A ring exchange: each rank sends to rank+1 and receives from rank-1. Plain
// Send/Recv order them (even ranks send first); the batch posts both at once.
std::string sendRecv(const RankContext& c, HcclDataType t, uint64_t count, bool batch) {
    if (c.size == 1) {  // the only peer would be the rank itself, which HCCL rejects
        float x = 0;
        bool rejected = HcclSend(&x, 1, HCCL_DATA_TYPE_FP32, 0, c.comm, c.stream) == HCCL_E_PARA &&
                        HcclRecv(&x, 1, HCCL_DATA_TYPE_FP32, 0, c.comm, c.stream) == HCCL_E_PARA;
        return rejected ? "" : "send/recv to self was not rejected";
    }
    const uint32_t next = (c.rank + 1) % c.size, prev = (c.rank + c.size - 1) % c.size;
    auto send = buffer(t, count), recv = buffer(t, count);
    for (uint64_t i = 0; i < count; ++i) store(t, send.data(), i, payload(c.rank, i));
    std::string e;
    if (batch) {
        HcclSendRecvItem items[2] = {{HCCL_RECV, recv.data(), count, t, prev}, {HCCL_SEND, send.data(), count, t, next}};
        e = runOp(HcclBatchSendRecv(items, 2, c.comm, c.stream), c.stream);
    } else if (c.rank % 2 == 0) {
        e = runOp(HcclSend(send.data(), count, t, next, c.comm, c.stream), c.stream);
        if (e.empty()) e = runOp(HcclRecv(recv.data(), count, t, prev, c.comm, c.stream), c.stream);
    } else {
        e = runOp(HcclRecv(recv.data(), count, t, prev, c.comm, c.stream), c.stream);
        if (e.empty()) e = runOp(HcclSend(send.data(), count, t, next, c.comm, c.stream), c.stream);
    }
    if (!e.empty()) return e;
    return compare(count, [&](uint64_t i) { return load(t, recv.data(), i); }, [&](uint64_t i) { return payload(prev, i); });
}

// Every other rank sends rank 0 two messages; rank 0 receives them from any source
// (HostcclRecvAny) and checks each against the rank it names, and that a sender's two
// messages arrive in the order sent. Then a barrier.
std::string receiveFromAny(const RankContext& c, HcclDataType t, uint64_t count) {
    const uint32_t n = c.size;
    auto buf = buffer(t, count);
    if (c.rank != 0) {
        for (uint32_t k = 0; k < 2; ++k) {
            for (uint64_t i = 0; i < count; ++i) store(t, buf.data(), i, payload(c.rank + k * n, i));
            if (std::string e = runOp(HcclSend(buf.data(), count, t, 0, c.comm, c.stream), c.stream); !e.empty()) return e;
        }
        return "";
    }
    std::vector<uint32_t> seen(n, 0);
    for (uint32_t m = 0; m < 2 * (n - 1); ++m) {
        uint32_t source = UINT32_MAX;
        if (std::string e = runOp(HostcclRecvAny(buf.data(), count, t, &source, c.comm, c.stream), c.stream); !e.empty())
            return e;
        if (source == 0 || source >= n || seen[source] == 2)
            return fmt::format("message {}: rank {} named as its source", m, source);
        const uint32_t id = source + seen[source]++ * n;
        std::string e = compare(count, [&](uint64_t i) { return load(t, buf.data(), i); },
                                [&](uint64_t i) { return payload(id, i); });
        if (!e.empty()) return fmt::format("message {} (from rank {}): {}", m, source, e);
    }
    return "";
}

std::string recvAny(const RankContext& c, HcclDataType t, uint64_t count) {
    if (c.size == 1) {
        auto buf = buffer(t, count);
        uint32_t source = UINT32_MAX;
        return HostcclRecvAny(buf.data(), count, t, &source, c.comm, c.stream) == HCCL_E_PARA
                   ? ""
                   : "a receive from any source with no other rank was not rejected";
    }
    std::string e = receiveFromAny(c, t, count);
    // The next case's sends would otherwise be the next message from any source.
    return e.empty() ? runOp(HcclBarrier(c.comm, c.stream), c.stream) : e;
}

// Many small ops in a row on one stream with a barrier between, synchronised once.
std::string barrierRounds(const RankContext& c) {
    std::vector<std::vector<int32_t>> bufs(20, std::vector<int32_t>(3));
    for (int k = 0; k < 20; ++k) {
        bufs[k] = {int32_t(c.rank), 1, k};
        if (HcclBarrier(c.comm, c.stream) != HCCL_SUCCESS) return "barrier enqueue failed";
        if (HcclAllReduce(bufs[k].data(), bufs[k].data(), 3, HCCL_DATA_TYPE_INT32, HCCL_REDUCE_SUM, c.comm, c.stream) !=
            HCCL_SUCCESS)
            return "allreduce enqueue failed";
    }
    if (int rc = aclrtSynchronizeStream(c.stream)) return fmt::format("synchronize returned {}", rc);
    const int32_t n = int32_t(c.size);
    for (int k = 0; k < 20; ++k)
        if (bufs[k] != std::vector<int32_t>{n * (n - 1) / 2, n, n * k}) return fmt::format("round {} is wrong", k);
    return "";
}

}  // namespace

const std::vector<std::string>& matrixFamilies() {
    static const std::vector<std::string> f = {"AllReduce", "Reduce",    "ReduceScatter", "ReduceScatterV",
                                               "Broadcast", "AllGather", "AllGatherV",    "Scatter",
                                               "AlltoAll",  "AlltoAllV", "AlltoAllVC",    "SendRecv",
                                               "BatchSendRecv", "RecvAny",  "Barrier"};
    return f;
}

const char* const kOneTypePerSize = "int8,fp16,fp32,int64,int128";

bool caseInTypes(const MatrixCase& c, const std::string& dtypes) {
    if (dtypes.empty() || c.dtype < 0) return true;
    const std::string listed = std::string(",").append(dtypes).append(",");
    return listed.find(std::string(",").append(dtypeName(HcclDataType(c.dtype))).append(",")) != std::string::npos;
}

std::vector<MatrixCase> matrixCases(const std::string& family, uint32_t n, bool withLarge) {
    std::vector<MatrixCase> out;
    auto once = [&](const char* name, auto f) {  // one case per dtype (layout fixed by the family)
        for (HcclDataType t : allTypes())
            out.push_back({caseName(name, t, "", 0, false), [=](const RankContext& c) { return f(c, t); }, false, t});
    };
    if (family == "AllReduce") addReductions(out, "AllReduce", n, false, allReduce);
    if (family == "Reduce") addReductions(out, "Reduce", n, false, reduce);
    if (family == "ReduceScatter") addReductions(out, "ReduceScatter", n, true, reduceScatter);
    if (family == "ReduceScatterV")
        for (HcclDataType t : reducibleTypes())
            for (HcclReduceOp op : allOps())
                out.push_back({caseName("ReduceScatterV", t, reduceOpName(op), 0, false),
                               [=](const RankContext& c) { return reduceScatterV(c, t, op, 0, false); }, false, t});
    if (family == "Broadcast") addMoves(out, "Broadcast", n, false, false, broadcast);
    if (family == "AllGather") addMoves(out, "AllGather", n, true, true, allGather);
    if (family == "AllGatherV") once("AllGatherV", [](const RankContext& c, HcclDataType t) { return allGatherV(c, t, 0, false); });
    if (family == "Scatter") addMoves(out, "Scatter", n, true, false, scatter);
    if (family == "AlltoAll")
        addMoves(out, "AlltoAll", n, true, false, [](const RankContext& c, HcclDataType t, uint64_t n, bool) { return alltoallv(c, t, 0, n); });
    if (family == "AlltoAllV") once("AlltoAllV", [](const RankContext& c, HcclDataType t) { return alltoallv(c, t, 1, 0); });
    if (family == "AlltoAllVC") once("AlltoAllVC", [](const RankContext& c, HcclDataType t) { return alltoallv(c, t, 2, 0); });
    if (family == "SendRecv")
        addMoves(out, "SendRecv", n, false, false, [](const RankContext& c, HcclDataType t, uint64_t n, bool) { return sendRecv(c, t, n, false); });
    if (family == "BatchSendRecv")
        addMoves(out, "BatchSendRecv", n, false, false, [](const RankContext& c, HcclDataType t, uint64_t n, bool) { return sendRecv(c, t, n, true); });
    if (family == "RecvAny")
        addMoves(out, "RecvAny", n, false, false, [](const RankContext& c, HcclDataType t, uint64_t n, bool) { return recvAny(c, t, n); });
    if (family == "Barrier") out.push_back({"Barrier rounds", barrierRounds});
    if (!withLarge) out.erase(std::remove_if(out.begin(), out.end(), [](const MatrixCase& c) { return c.large; }), out.end());
    return out;
}

}  // namespace hostccl::test
