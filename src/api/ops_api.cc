// Operator entry points of the HCCL C API: validate, normalise to CollArgs,
// enqueue on the stream. Nothing runs on the caller's thread.
#include <algorithm>
#include <optional>

#include "api/group.h"
#include "api/op_queue.h"
#include "api/validate.h"
#include "common/datatype.h"
#include "common/raw_enum.h"
#include "hccl/hccl.h"
#include "hostccl/hostccl.h"

using namespace hostccl;
using namespace hostccl::api;

namespace {

// Common prologue: live communicator and stream.
HcclResult begin(HcclComm comm, aclrtStream stream, const char* fn, Comm** c, std::shared_ptr<runtime::Stream>* s) {
    HOSTCCL_CHECK(checkComm(comm, fn, c));
    return checkStream(stream, fn, s);
}

void logEntry(const char* fn, const Comm& c, const CollArgs& a) {
    if (!log::entryLogEnabled()) return;
    log::info("{}(comm={}, rank={}, send={}, recv={}, count={}, dtype={}, op={}, root={}, peer={})", fn, c.name(),
              c.rank(), a.sendBuf, a.recvBuf, a.count, dtypeName(a.dtype), reduceOpName(a.op), a.root, a.peer);
}

HcclResult submit(const char* fn, Comm* c, const std::shared_ptr<runtime::Stream>& s, CollArgs args) {
    logEntry(fn, *c, args);
    if (group::open()) {  // launched at HcclGroupEnd
        group::defer(c, s, std::move(args));
        return HCCL_SUCCESS;
    }
    return enqueue(c, *s, std::move(args));
}

std::vector<uint64_t> uniform(uint32_t n, uint64_t value) { return std::vector<uint64_t>(n, value); }
std::vector<uint64_t> strided(uint32_t n, uint64_t stride) {
    std::vector<uint64_t> v(n);
    for (uint32_t i = 0; i < n; ++i) v[i] = i * stride;
    return v;
}

// Per-rank counts/displacements from the user's arrays; each block must stay
// addressable (displacement + count without overflow).
HcclResult readLayout(const void* counts, const void* displs, uint32_t n, HcclDataType dtype, const char* fn,
                      const char* what, std::vector<uint64_t>* outCounts, std::vector<uint64_t>* outDispls) {
    if (counts == nullptr || displs == nullptr) return fail(HCCL_E_PTR, "{}: {} counts or displacements are NULL", fn, what);
    const auto* c = static_cast<const uint64_t*>(counts);
    const auto* d = static_cast<const uint64_t*>(displs);
    const uint64_t limit = UINT64_MAX / dtypeSize(dtype);
    for (uint32_t i = 0; i < n; ++i) {
        if (c[i] > limit || d[i] > limit - c[i])
            return fail(HCCL_E_PARA, "{}: {} block {} (count {}, displacement {}) overflows", fn, what, i, c[i], d[i]);
    }
    outCounts->assign(c, c + n);
    outDispls->assign(d, d + n);
    return HCCL_SUCCESS;
}

uint64_t extent(const std::vector<uint64_t>& counts, const std::vector<uint64_t>& displs) {
    uint64_t end = 0;
    for (size_t i = 0; i < counts.size(); ++i)
        if (counts[i] > 0) end = std::max(end, displs[i] + counts[i]);
    return end;
}

// The caller's counts and displacements for one side of an all-to-all.
struct RawLayout {
    const void* counts;
    const void* displs;
};

// What every rank knows alike about an all-to-all's sizes (see CollArgs::agreedCount).
struct SizeAgreement {
    std::optional<uint64_t> count;
    bool equal = false;
};

// The whole matrix is known to every rank: its largest row (the busiest sender) is the
// size all ranks weigh, and whether every entry is the same.
HcclResult agreementOfMatrix(const uint64_t* m, uint32_t n, const ErrorSite& site, SizeAgreement* out) {
    uint64_t largest = 0;
    bool equal = true;
    for (uint32_t i = 0; i < n; ++i) {
        uint64_t row = 0;
        for (uint32_t j = 0; j < n; ++j) {
            const uint64_t x = m[uint64_t(i) * n + j];
            if (x > UINT64_MAX - row) return fail(HCCL_E_PARA, site, "sendCountMatrix row {} overflows", i);
            row += x;
            equal = equal && x == m[0];
        }
        largest = std::max(largest, row);
    }
    *out = SizeAgreement{largest, equal};
    return HCCL_SUCCESS;
}

// The all-to-all family after each entry point has built its layouts.
HcclResult submitAlltoAll(const char* fn, const void* sendBuf, RawLayout send, HcclDataType sendType,
                          const void* recvBuf, RawLayout recv, HcclDataType recvType, HcclComm comm,
                          aclrtStream stream, SizeAgreement agreed) {
    Comm* c;
    std::shared_ptr<runtime::Stream> s;
    HOSTCCL_CHECK(begin(comm, stream, fn, &c, &s));
    HOSTCCL_CHECK(checkType(sendType, fn));
    HOSTCCL_CHECK(checkType(recvType, fn));
    if (sendType != recvType)
        return fail(HCCL_E_PARA, c->site(fn), "sendType {} differs from recvType {}", dtypeName(sendType), dtypeName(recvType));
    CollArgs a;
    HOSTCCL_CHECK(readLayout(send.counts, send.displs, c->size(), sendType, fn, "send", &a.sendCounts, &a.sendDispls));
    HOSTCCL_CHECK(readLayout(recv.counts, recv.displs, c->size(), recvType, fn, "receive", &a.recvCounts, &a.recvDispls));
    HOSTCCL_CHECK(checkBuffer(sendBuf, extent(a.sendCounts, a.sendDispls), 1, sendType, false, fn, "sendBuf"));
    HOSTCCL_CHECK(checkBuffer(recvBuf, extent(a.recvCounts, a.recvDispls), 1, recvType, false, fn, "recvBuf"));
    if (sendBuf == recvBuf && extent(a.recvCounts, a.recvDispls) > 0)
        return fail(HCCL_E_PARA, c->site(fn), "sendBuf and recvBuf must differ");
    a.type = CollType::AlltoAllV;
    a.sendBuf = sendBuf;
    a.recvBuf = const_cast<void*>(recvBuf);
    a.dtype = sendType;
    a.agreedCount = agreed.count;
    a.equalEverywhere = agreed.equal;
    return submit(fn, c, s, std::move(a));
}

// The peer of a send or receive: a rank of the communicator other than this one.
HcclResult checkPeer(uint32_t peer, const Comm& c, const char* fn, const char* what) {
    HOSTCCL_CHECK(checkRank(peer, c, fn, what));
    if (peer == c.rank()) return fail(HCCL_E_PARA, c.site(fn), "{} {} is this rank", what, peer);
    return HCCL_SUCCESS;
}

CollArgs pointToPoint(CollType type, void* buf, uint64_t count, HcclDataType dtype, uint32_t peer) {
    CollArgs a;
    a.type = type;
    if (type == CollType::Send) a.sendBuf = buf;
    else a.recvBuf = buf;
    a.count = count;
    a.dtype = dtype;
    a.peer = peer;
    return a;
}

}  // namespace

extern "C" {

HcclResult HcclAllReduce(void* sendBuf, void* recvBuf, uint64_t count, HcclDataType dataType, HcclReduceOp op,
                         HcclComm comm, aclrtStream stream) {
    const char* fn = "HcclAllReduce";
    Comm* c;
    std::shared_ptr<runtime::Stream> s;
    HOSTCCL_CHECK(begin(comm, stream, fn, &c, &s));
    HOSTCCL_CHECK(checkReduction(dataType, op, fn));
    HOSTCCL_CHECK(checkBuffer(sendBuf, count, 1, dataType, true, fn, "sendBuf"));
    HOSTCCL_CHECK(checkBuffer(recvBuf, count, 1, dataType, true, fn, "recvBuf"));
    CollArgs a;
    a.type = CollType::AllReduce;
    a.sendBuf = sendBuf;
    a.recvBuf = recvBuf;
    a.count = count;
    a.dtype = dataType;
    a.op = op;
    return submit(fn, c, s, std::move(a));
}

HcclResult HcclBroadcast(void* buf, uint64_t count, HcclDataType dataType, uint32_t root, HcclComm comm,
                         aclrtStream stream) {
    const char* fn = "HcclBroadcast";
    Comm* c;
    std::shared_ptr<runtime::Stream> s;
    HOSTCCL_CHECK(begin(comm, stream, fn, &c, &s));
    HOSTCCL_CHECK(checkType(dataType, fn));
    HOSTCCL_CHECK(checkRank(root, *c, fn, "root"));
    HOSTCCL_CHECK(checkBuffer(buf, count, 1, dataType, false, fn, "buf"));
    CollArgs a;
    a.type = CollType::Broadcast;
    a.sendBuf = buf;
    a.recvBuf = buf;
    a.count = count;
    a.dtype = dataType;
    a.root = root;
    return submit(fn, c, s, std::move(a));
}

HcclResult HcclReduce(void* sendBuf, void* recvBuf, uint64_t count, HcclDataType dataType, HcclReduceOp op,
                      uint32_t root, HcclComm comm, aclrtStream stream) {
    const char* fn = "HcclReduce";
    Comm* c;
    std::shared_ptr<runtime::Stream> s;
    HOSTCCL_CHECK(begin(comm, stream, fn, &c, &s));
    HOSTCCL_CHECK(checkReduction(dataType, op, fn));
    HOSTCCL_CHECK(checkRank(root, *c, fn, "root"));
    HOSTCCL_CHECK(checkBuffer(sendBuf, count, 1, dataType, true, fn, "sendBuf"));
    if (c->rank() == root) HOSTCCL_CHECK(checkBuffer(recvBuf, count, 1, dataType, true, fn, "recvBuf"));
    CollArgs a;
    a.type = CollType::Reduce;
    a.sendBuf = sendBuf;
    a.recvBuf = recvBuf;
    a.count = count;
    a.dtype = dataType;
    a.op = op;
    a.root = root;
    return submit(fn, c, s, std::move(a));
}

HcclResult HcclAllGather(void* sendBuf, void* recvBuf, uint64_t sendCount, HcclDataType dataType, HcclComm comm,
                         aclrtStream stream) {
    const char* fn = "HcclAllGather";
    Comm* c;
    std::shared_ptr<runtime::Stream> s;
    HOSTCCL_CHECK(begin(comm, stream, fn, &c, &s));
    HOSTCCL_CHECK(checkType(dataType, fn));
    HOSTCCL_CHECK(checkBuffer(sendBuf, sendCount, 1, dataType, false, fn, "sendBuf"));
    HOSTCCL_CHECK(checkBuffer(recvBuf, sendCount, c->size(), dataType, false, fn, "recvBuf"));
    CollArgs a;
    a.type = CollType::AllGather;
    a.sendBuf = sendBuf;
    a.recvBuf = recvBuf;
    a.count = sendCount;
    a.dtype = dataType;
    a.recvCounts = uniform(c->size(), sendCount);
    a.recvDispls = strided(c->size(), sendCount);
    return submit(fn, c, s, std::move(a));
}

HcclResult HcclAllGatherV(void* sendBuf, uint64_t sendCount, void* recvBuf, const void* recvCounts,
                          const void* recvDispls, HcclDataType dataType, HcclComm comm, aclrtStream stream) {
    const char* fn = "HcclAllGatherV";
    Comm* c;
    std::shared_ptr<runtime::Stream> s;
    HOSTCCL_CHECK(begin(comm, stream, fn, &c, &s));
    HOSTCCL_CHECK(checkType(dataType, fn));
    CollArgs a;
    HOSTCCL_CHECK(readLayout(recvCounts, recvDispls, c->size(), dataType, fn, "receive", &a.recvCounts, &a.recvDispls));
    if (a.recvCounts[c->rank()] != sendCount)
        return fail(HCCL_E_PARA, c->site(fn), "recvCounts[{}] = {} differs from sendCount {}", c->rank(),
                    a.recvCounts[c->rank()], sendCount);
    HOSTCCL_CHECK(checkBuffer(sendBuf, sendCount, 1, dataType, false, fn, "sendBuf"));
    HOSTCCL_CHECK(checkBuffer(recvBuf, extent(a.recvCounts, a.recvDispls), 1, dataType, false, fn, "recvBuf"));
    a.type = CollType::AllGatherV;
    a.sendBuf = sendBuf;
    a.recvBuf = recvBuf;
    a.dtype = dataType;
    return submit(fn, c, s, std::move(a));
}

HcclResult HcclReduceScatter(void* sendBuf, void* recvBuf, uint64_t recvCount, HcclDataType dataType,
                             HcclReduceOp op, HcclComm comm, aclrtStream stream) {
    const char* fn = "HcclReduceScatter";
    Comm* c;
    std::shared_ptr<runtime::Stream> s;
    HOSTCCL_CHECK(begin(comm, stream, fn, &c, &s));
    HOSTCCL_CHECK(checkReduction(dataType, op, fn));
    HOSTCCL_CHECK(checkBuffer(sendBuf, recvCount, c->size(), dataType, true, fn, "sendBuf"));
    HOSTCCL_CHECK(checkBuffer(recvBuf, recvCount, 1, dataType, true, fn, "recvBuf"));
    CollArgs a;
    a.type = CollType::ReduceScatter;
    a.sendBuf = sendBuf;
    a.recvBuf = recvBuf;
    a.count = recvCount;
    a.dtype = dataType;
    a.op = op;
    a.sendCounts = uniform(c->size(), recvCount);
    a.sendDispls = strided(c->size(), recvCount);
    return submit(fn, c, s, std::move(a));
}

HcclResult HcclReduceScatterV(void* sendBuf, const void* sendCounts, const void* sendDispls, void* recvBuf,
                              uint64_t recvCount, HcclDataType dataType, HcclReduceOp op, HcclComm comm,
                              aclrtStream stream) {
    const char* fn = "HcclReduceScatterV";
    Comm* c;
    std::shared_ptr<runtime::Stream> s;
    HOSTCCL_CHECK(begin(comm, stream, fn, &c, &s));
    HOSTCCL_CHECK(checkReduction(dataType, op, fn));
    CollArgs a;
    HOSTCCL_CHECK(readLayout(sendCounts, sendDispls, c->size(), dataType, fn, "send", &a.sendCounts, &a.sendDispls));
    if (a.sendCounts[c->rank()] != recvCount)
        return fail(HCCL_E_PARA, c->site(fn), "sendCounts[{}] = {} differs from recvCount {}", c->rank(),
                    a.sendCounts[c->rank()], recvCount);
    if (sendBuf == recvBuf && recvCount > 0) return fail(HCCL_E_PARA, c->site(fn), "sendBuf and recvBuf must differ");
    HOSTCCL_CHECK(checkBuffer(sendBuf, extent(a.sendCounts, a.sendDispls), 1, dataType, true, fn, "sendBuf"));
    HOSTCCL_CHECK(checkBuffer(recvBuf, recvCount, 1, dataType, true, fn, "recvBuf"));
    a.type = CollType::ReduceScatterV;
    a.sendBuf = sendBuf;
    a.recvBuf = recvBuf;
    a.dtype = dataType;
    a.op = op;
    return submit(fn, c, s, std::move(a));
}

HcclResult HcclScatter(void* sendBuf, void* recvBuf, uint64_t recvCount, HcclDataType dataType, uint32_t root,
                       HcclComm comm, aclrtStream stream) {
    const char* fn = "HcclScatter";
    Comm* c;
    std::shared_ptr<runtime::Stream> s;
    HOSTCCL_CHECK(begin(comm, stream, fn, &c, &s));
    HOSTCCL_CHECK(checkType(dataType, fn));
    HOSTCCL_CHECK(checkRank(root, *c, fn, "root"));
    if (c->rank() == root) HOSTCCL_CHECK(checkBuffer(sendBuf, recvCount, c->size(), dataType, false, fn, "sendBuf"));
    HOSTCCL_CHECK(checkBuffer(recvBuf, recvCount, 1, dataType, false, fn, "recvBuf"));
    CollArgs a;
    a.type = CollType::Scatter;
    a.sendBuf = sendBuf;
    a.recvBuf = recvBuf;
    a.count = recvCount;
    a.dtype = dataType;
    a.root = root;
    return submit(fn, c, s, std::move(a));
}


HcclResult HcclSend(void* sendBuf, uint64_t count, HcclDataType dataType, uint32_t destRank, HcclComm comm,
                    aclrtStream stream) {
    const char* fn = "HcclSend";
    Comm* c;
    std::shared_ptr<runtime::Stream> s;
    HOSTCCL_CHECK(begin(comm, stream, fn, &c, &s));
    HOSTCCL_CHECK(checkType(dataType, fn));
    HOSTCCL_CHECK(checkPeer(destRank, *c, fn, "destRank"));
    HOSTCCL_CHECK(checkBuffer(sendBuf, count, 1, dataType, false, fn, "sendBuf"));
    return submit(fn, c, s, pointToPoint(CollType::Send, sendBuf, count, dataType, destRank));
}

HcclResult HcclRecv(void* recvBuf, uint64_t count, HcclDataType dataType, uint32_t srcRank, HcclComm comm,
                    aclrtStream stream) {
    const char* fn = "HcclRecv";
    Comm* c;
    std::shared_ptr<runtime::Stream> s;
    HOSTCCL_CHECK(begin(comm, stream, fn, &c, &s));
    HOSTCCL_CHECK(checkType(dataType, fn));
    HOSTCCL_CHECK(checkPeer(srcRank, *c, fn, "srcRank"));
    HOSTCCL_CHECK(checkBuffer(recvBuf, count, 1, dataType, false, fn, "recvBuf"));
    return submit(fn, c, s, pointToPoint(CollType::Recv, recvBuf, count, dataType, srcRank));
}

HcclResult HostcclRecvAny(void* recvBuf, uint64_t count, HcclDataType dataType, uint32_t* srcRank, HcclComm comm,
                          aclrtStream stream) {
    const char* fn = "HostcclRecvAny";
    Comm* c;
    std::shared_ptr<runtime::Stream> s;
    HOSTCCL_CHECK(begin(comm, stream, fn, &c, &s));
    HOSTCCL_CHECK(checkType(dataType, fn));
    if (srcRank == nullptr) return fail(HCCL_E_PTR, c->site(fn), "srcRank is NULL");
    if (c->size() < 2) return fail(HCCL_E_PARA, c->site(fn), "the communicator has no other rank to receive from");
    // A group batches its sends and receives by peer, and this one has none yet.
    if (group::open())
        return fail(HCCL_E_NOT_SUPPORT, c->site(fn), "a receive from any source cannot be part of a group");
    HOSTCCL_CHECK(checkBuffer(recvBuf, count, 1, dataType, false, fn, "recvBuf"));
    CollArgs a = pointToPoint(CollType::Recv, recvBuf, count, dataType, 0);
    a.anySource = srcRank;
    return submit(fn, c, s, std::move(a));
}

HcclResult HcclBatchSendRecv(HcclSendRecvItem* sendRecvInfo, uint32_t itemNum, HcclComm comm, aclrtStream stream) {
    const char* fn = "HcclBatchSendRecv";
    Comm* c;
    std::shared_ptr<runtime::Stream> s;
    HOSTCCL_CHECK(begin(comm, stream, fn, &c, &s));
    if (itemNum > 0 && sendRecvInfo == nullptr) return fail(HCCL_E_PTR, c->site(fn), "sendRecvInfo is NULL");
    for (uint32_t i = 0; i < itemNum; ++i) {
        const HcclSendRecvItem& it = sendRecvInfo[i];
        // The caller's enum fields may hold any integer: read them as integers first.
        const int32_t type = rawEnum(it.sendRecvType), dtype = rawEnum(it.dataType);
        if (type != HCCL_SEND && type != HCCL_RECV)
            return fail(HCCL_E_PARA, c->site(fn), "item {}: sendRecvType {} is neither HCCL_SEND nor HCCL_RECV", i, type);
        if (!dtypeValueValid(dtype))
            return fail(HCCL_E_PARA, c->site(fn), "item {}: invalid data type {}", i, dtype);
        HOSTCCL_CHECK(checkRank(it.remoteRank, *c, fn, "remoteRank"));
        if (it.remoteRank == c->rank()) return fail(HCCL_E_PARA, c->site(fn), "item {}: remoteRank is this rank", i);
        HOSTCCL_CHECK(checkBuffer(it.buf, it.count, 1, it.dataType, false, fn, "item buf"));
    }
    CollArgs a;
    a.type = CollType::BatchSendRecv;
    a.items.assign(sendRecvInfo, sendRecvInfo + itemNum);
    return submit(fn, c, s, std::move(a));
}

HcclResult HcclAlltoAllV(const void* sendBuf, const void* sendCounts, const void* sdispls, HcclDataType sendType,
                         const void* recvBuf, const void* recvCounts, const void* rdispls, HcclDataType recvType,
                         HcclComm comm, aclrtStream stream) {
    return submitAlltoAll("HcclAlltoAllV", sendBuf, {sendCounts, sdispls}, sendType, recvBuf, {recvCounts, rdispls},
                          recvType, comm, stream, SizeAgreement{});
}

HcclResult HcclAlltoAll(const void* sendBuf, uint64_t sendCount, HcclDataType sendType, const void* recvBuf,
                        uint64_t recvCount, HcclDataType recvType, HcclComm comm, aclrtStream stream) {
    const char* fn = "HcclAlltoAll";
    Comm* c = nullptr;
    HOSTCCL_CHECK(checkComm(comm, fn, &c));
    if (sendCount != recvCount)
        return fail(HCCL_E_PARA, c->site(fn), "sendCount {} differs from recvCount {}", sendCount, recvCount);
    const uint32_t n = c->size();
    if (sendCount > UINT64_MAX / n) return fail(HCCL_E_PARA, c->site(fn), "sendCount {} x {} ranks overflows", sendCount, n);
    std::vector<uint64_t> counts = uniform(n, sendCount), displs = strided(n, sendCount);
    return submitAlltoAll(fn, sendBuf, {counts.data(), displs.data()}, sendType, recvBuf,
                          {counts.data(), displs.data()}, recvType, comm, stream, SizeAgreement{sendCount * n, true});
}

HcclResult HcclAlltoAllVC(const void* sendBuf, const void* sendCountMatrix, HcclDataType sendType, const void* recvBuf,
                          HcclDataType recvType, HcclComm comm, aclrtStream stream) {
    const char* fn = "HcclAlltoAllVC";
    Comm* c = nullptr;
    HOSTCCL_CHECK(checkComm(comm, fn, &c));
    if (sendCountMatrix == nullptr) return fail(HCCL_E_PTR, c->site(fn), "sendCountMatrix is NULL");
    // Row i of the matrix is what rank i sends to each rank; blocks are packed
    // densely in peer order on both sides.
    const auto* m = static_cast<const uint64_t*>(sendCountMatrix);
    const uint32_t n = c->size(), me = c->rank();
    std::vector<uint64_t> sc(n), sd(n), rc(n), rd(n);
    uint64_t sOff = 0, rOff = 0;
    for (uint32_t j = 0; j < n; ++j) {
        sc[j] = m[uint64_t(me) * n + j];
        rc[j] = m[uint64_t(j) * n + me];
        sd[j] = sOff;
        rd[j] = rOff;
        if (sc[j] > UINT64_MAX - sOff || rc[j] > UINT64_MAX - rOff)
            return fail(HCCL_E_PARA, c->site(fn), "sendCountMatrix totals overflow");
        sOff += sc[j];
        rOff += rc[j];
    }
    SizeAgreement agreed;
    HOSTCCL_CHECK(agreementOfMatrix(m, n, c->site(fn), &agreed));
    return submitAlltoAll(fn, sendBuf, {sc.data(), sd.data()}, sendType, recvBuf, {rc.data(), rd.data()}, recvType,
                          comm, stream, agreed);
}

HcclResult HcclBarrier(HcclComm comm, aclrtStream stream) {
    const char* fn = "HcclBarrier";
    Comm* c;
    std::shared_ptr<runtime::Stream> s;
    HOSTCCL_CHECK(begin(comm, stream, fn, &c, &s));
    CollArgs a;
    a.type = CollType::Barrier;
    a.dtype = HCCL_DATA_TYPE_INT8;
    return submit(fn, c, s, std::move(a));
}

}  // extern "C"
