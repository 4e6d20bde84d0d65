// One operation as the algorithms see it. The API layer normalises the variants:
// AllGather, ReduceScatter and the all-to-all family arrive with explicit per-rank
// counts and displacements (in elements), so one algorithm serves the plain and V forms.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "common/coll_type.h"
#include "hccl/hccl_types.h"

namespace hostccl {

struct CollArgs {
    CollType type = CollType::AllReduce;
    const void* sendBuf = nullptr;
    void* recvBuf = nullptr;
    uint64_t count = 0;  // the API's count argument (for V forms: 0)
    HcclDataType dtype = HCCL_DATA_TYPE_FP32;
    HcclReduceOp op = HCCL_REDUCE_SUM;
    uint32_t root = 0;
    uint32_t peer = 0;  // Send / Recv
    // Recv from any source (HostcclRecvAny): where the sender's rank is written once
    // the message is in (`peer` is then unused); null for a Recv from `peer`.
    uint32_t* anySource = nullptr;
    std::vector<uint64_t> sendCounts, sendDispls, recvCounts, recvDispls;
    std::vector<HcclSendRecvItem> items;  // BatchSendRecv
    // The all-to-all-v family's counts are each rank's own: the selector may weigh only
    // what every rank knows alike, or ranks choosing apart deadlock. `agreedCount`: the
    // elements per rank every rank computes the same (HcclAlltoAll's n x count,
    // HcclAlltoAllVC's largest row); unset for HcclAlltoAllV. `equalEverywhere`: every
    // rank's blocks are the same size, packed in rank order (HcclAlltoAll, a uniform matrix).
    std::optional<uint64_t> agreedCount;
    bool equalEverywhere = false;
    uint64_t flightId = 0;  // the op's entry in the communicator's flight recorder (0: none)
};

// The bytes that size the op, for choosing how to run it: every rank's block for the
// gathers and all-to-alls (what every rank agrees on when it can), `count` elements
// for the rest.
inline uint64_t opBytes(const CollArgs& a, size_t elemSize) {
    auto sum = [](const std::vector<uint64_t>& v) {
        uint64_t s = 0;
        for (uint64_t x : v) s += x;
        return s;
    };
    switch (a.type) {
        case CollType::AllGather:
        case CollType::AllGatherV: return sum(a.recvCounts) * elemSize;
        case CollType::ReduceScatter:
        case CollType::ReduceScatterV:
        case CollType::AlltoAll:
        case CollType::AlltoAllV:
        case CollType::AlltoAllVC: return a.agreedCount.value_or(sum(a.sendCounts)) * elemSize;
        default: return a.count * elemSize;
    }
}

// The layout of HcclAlltoAll as the API layer builds it (the V form: `count` elements
// to and from every rank, packed in rank order, alike on every rank), without buffers:
// for the simulator and the communicator's description.
inline void setPlainAlltoAll(CollArgs* a, uint32_t n, uint64_t count) {
    a->type = CollType::AlltoAllV;
    a->count = 0;
    a->sendCounts.assign(n, count);
    a->sendDispls.resize(n);
    for (uint32_t i = 0; i < n; ++i) a->sendDispls[i] = i * count;
    a->recvCounts = a->sendCounts;
    a->recvDispls = a->sendDispls;
    a->agreedCount = count * n;
    a->equalEverywhere = true;
}

}  // namespace hostccl
