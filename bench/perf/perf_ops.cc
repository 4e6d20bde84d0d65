// The collectives the perf tools measure. Inputs come from tests/support/values.h,
// so every dtype and op has an exactly predictable result that verify() checks.
#include <vector>

#include "bench/perf/perf_harness.h"
#include "common/datatype.h"
#include "tests/support/values.h"

namespace hostccl::perf {

namespace {

using test::input;
using test::load;
using test::payload;
using test::reduced;
using test::store;

template <typename Want>
uint64_t countWrong(HcclDataType t, const void* buf, uint64_t offset, uint64_t n, Want want) {
    uint64_t wrong = 0;
    for (uint64_t i = 0; i < n; ++i) wrong += load(t, buf, offset + i) != want(i);
    return wrong;
}

Layout whole(uint64_t elems, uint32_t) { return {elems, elems, elems}; }
Layout gathered(uint64_t elems, uint32_t n) { return {elems / n, elems / n, elems / n * n}; }
Layout scattered(uint64_t elems, uint32_t n) { return {elems / n, elems / n * n, elems / n}; }
Layout exchanged(uint64_t elems, uint32_t n) { return {elems / n, elems / n * n, elems / n * n}; }

double allReduceBus(uint32_t n) { return n > 1 ? 2.0 * (n - 1) / n : 0.0; }
double shareBus(uint32_t n) { return n > 1 ? double(n - 1) / n : 0.0; }
double oneBus(uint32_t) { return 1.0; }
double noBus(uint32_t) { return 0.0; }
// A barrier moves nothing: whatever -b/-e say, its rows are 0 bytes and time only.
Layout nothing(uint64_t, uint32_t) { return {0, 0, 0}; }

void sameBuffer(char* buf, const Layout&, uint32_t, size_t, void** send, void** recv) { *send = *recv = buf; }
// NCCL's convention: the all-gather input is the rank's block of the output...
void inputIsOwnBlock(char* buf, const Layout& l, uint32_t rank, size_t es, void** send, void** recv) {
    *recv = buf;
    *send = buf + rank * l.count * es;
}
// ...and the reduce-scatter output is the rank's block of the input.
void outputIsOwnBlock(char* buf, const Layout& l, uint32_t rank, size_t es, void** send, void** recv) {
    *send = buf;
    *recv = buf + rank * l.count * es;
}

void fillReduceInput(void* send, void*, const Layout& l, uint32_t rank, const PerfOptions& o) {
    for (uint64_t i = 0; i < l.sendElems; ++i) store(o.dtype, send, i, input(o.op, rank, i));
}
void fillPayload(void* send, void*, const Layout& l, uint32_t rank, const PerfOptions& o) {
    for (uint64_t i = 0; i < l.sendElems; ++i) store(o.dtype, send, i, payload(rank, i));
}

// All-to-all: rank s sends payload(s * n + d, i) to rank d.
void fillExchange(void* s, void*, const Layout& l, uint32_t rank, const PerfOptions& o) {
    for (uint64_t i = 0; i < l.sendElems; ++i) store(o.dtype, s, i, payload(rank * o.nranks + uint32_t(i / l.count), i % l.count));
}
uint64_t verifyExchange(const void*, const void* r, const Layout& l, uint32_t rank, const PerfOptions& o) {
    return countWrong(o.dtype, r, 0, l.recvElems,
                      [&](uint64_t i) { return payload(uint32_t(i / l.count) * o.nranks + rank, i % l.count); });
}

const PerfOp kOps[] = {
    {"allreduce", true, false, true, whole, allReduceBus, sameBuffer,
     [](void* s, void* r, const Layout& l, const PerfOptions& o, uint32_t, HcclComm c, aclrtStream st) {
         return HcclAllReduce(s, r, l.count, o.dtype, o.op, c, st);
     },
     fillReduceInput,
     [](const void*, const void* r, const Layout& l, uint32_t, const PerfOptions& o) {
         return countWrong(o.dtype, r, 0, l.count, [&](uint64_t i) { return reduced(o.op, o.nranks, i); });
     }},
    {"allgather", false, false, true, gathered, shareBus, inputIsOwnBlock,
     [](void* s, void* r, const Layout& l, const PerfOptions& o, uint32_t, HcclComm c, aclrtStream st) {
         return HcclAllGather(s, r, l.count, o.dtype, c, st);
     },
     fillPayload,
     [](const void*, const void* r, const Layout& l, uint32_t, const PerfOptions& o) {
         return countWrong(o.dtype, r, 0, l.recvElems,
                           [&](uint64_t i) { return payload(uint32_t(i / l.count), i % l.count); });
     }},
    {"reducescatter", true, false, true, scattered, shareBus, outputIsOwnBlock,
     [](void* s, void* r, const Layout& l, const PerfOptions& o, uint32_t, HcclComm c, aclrtStream st) {
         return HcclReduceScatter(s, r, l.count, o.dtype, o.op, c, st);
     },
     fillReduceInput,
     [](const void*, const void* r, const Layout& l, uint32_t rank, const PerfOptions& o) {
         return countWrong(o.dtype, r, 0, l.count, [&](uint64_t i) { return reduced(o.op, o.nranks, rank * l.count + i); });
     }},
    // HCCL's broadcast has one buffer per rank: out of place, the root broadcasts
    // from its input and the others receive into their output (no extra copy).
    {"broadcast", false, true, true, whole, oneBus, sameBuffer,
     [](void* s, void* r, const Layout& l, const PerfOptions& o, uint32_t rank, HcclComm c, aclrtStream st) {
         return HcclBroadcast(rank == o.root ? s : r, l.count, o.dtype, o.root, c, st);
     },
     [](void* s, void* r, const Layout& l, uint32_t rank, const PerfOptions& o) {
         void* mine = rank == o.root ? s : r;
         for (uint64_t i = 0; i < l.count; ++i) store(o.dtype, mine, i, rank == o.root ? payload(o.root, i) : 0);
     },
     [](const void* s, const void* r, const Layout& l, uint32_t rank, const PerfOptions& o) {
         return countWrong(o.dtype, rank == o.root ? s : r, 0, l.count, [&](uint64_t i) { return payload(o.root, i); });
     }},
    {"reduce", true, true, true, whole, oneBus, sameBuffer,
     [](void* s, void* r, const Layout& l, const PerfOptions& o, uint32_t, HcclComm c, aclrtStream st) {
         return HcclReduce(s, r, l.count, o.dtype, o.op, o.root, c, st);
     },
     fillReduceInput,
     [](const void*, const void* r, const Layout& l, uint32_t rank, const PerfOptions& o) -> uint64_t {
         if (rank != o.root) return 0;
         return countWrong(o.dtype, r, 0, l.count, [&](uint64_t i) { return reduced(o.op, o.nranks, i); });
     }},
    {"alltoall", false, false, false, exchanged, shareBus, sameBuffer,
     [](void* s, void* r, const Layout& l, const PerfOptions& o, uint32_t, HcclComm c, aclrtStream st) {
         return HcclAlltoAll(s, l.count, o.dtype, r, l.count, o.dtype, c, st);
     },
     fillExchange, verifyExchange},
    {"alltoallv", false, false, false, exchanged, shareBus, sameBuffer,
     [](void* s, void* r, const Layout& l, const PerfOptions& o, uint32_t, HcclComm c, aclrtStream st) {
         std::vector<uint64_t> counts(o.nranks, l.count), displs(o.nranks);
         for (uint32_t p = 0; p < o.nranks; ++p) displs[p] = p * l.count;
         return HcclAlltoAllV(s, counts.data(), displs.data(), o.dtype, r, counts.data(), displs.data(), o.dtype, c, st);
     },
     fillExchange, verifyExchange},
    {"scatter", false, true, false, scattered, shareBus, sameBuffer,
     [](void* s, void* r, const Layout& l, const PerfOptions& o, uint32_t, HcclComm c, aclrtStream st) {
         return HcclScatter(s, r, l.count, o.dtype, o.root, c, st);
     },
     [](void* s, void*, const Layout& l, uint32_t rank, const PerfOptions& o) {
         if (rank == o.root)
             for (uint64_t i = 0; i < l.sendElems; ++i) store(o.dtype, s, i, payload(uint32_t(i / l.count), i % l.count));
     },
     [](const void*, const void* r, const Layout& l, uint32_t rank, const PerfOptions& o) {
         return countWrong(o.dtype, r, 0, l.count, [&](uint64_t i) { return payload(rank, i); });
     }},
    {"sendrecv", false, false, false, whole, oneBus, sameBuffer,
     [](void* s, void* r, const Layout& l, const PerfOptions& o, uint32_t rank, HcclComm c, aclrtStream st) {
         // A ring: send to the next rank while receiving from the previous one.
         uint32_t next = (rank + 1) % o.nranks, prev = (rank + o.nranks - 1) % o.nranks;
         if (o.nranks == 1) return aclrtMemcpyAsync(r, l.count * dtypeSize(o.dtype), s, l.count * dtypeSize(o.dtype), ACL_MEMCPY_DEVICE_TO_DEVICE, st) == 0 ? HCCL_SUCCESS : HCCL_E_RUNTIME;
         HcclSendRecvItem items[2] = {{HCCL_RECV, r, l.count, o.dtype, prev}, {HCCL_SEND, s, l.count, o.dtype, next}};
         return HcclBatchSendRecv(items, 2, c, st);
     },
     fillPayload,
     [](const void*, const void* r, const Layout& l, uint32_t rank, const PerfOptions& o) {
         uint32_t prev = (rank + o.nranks - 1) % o.nranks;
         return countWrong(o.dtype, r, 0, l.count, [&](uint64_t i) { return payload(prev, i); });
     }},
    {"barrier", false, false, false, nothing, noBus, sameBuffer,
     [](void*, void*, const Layout&, const PerfOptions&, uint32_t, HcclComm c, aclrtStream st) { return HcclBarrier(c, st); },
     [](void*, void*, const Layout&, uint32_t, const PerfOptions&) {},
     [](const void*, const void*, const Layout&, uint32_t, const PerfOptions&) { return uint64_t(0); }},
};

}  // namespace

const PerfOp* findPerfOp(const std::string& name) {
    for (const PerfOp& op : kOps)
        if (name == op.name) return &op;
    return nullptr;
}

}  // namespace hostccl::perf
