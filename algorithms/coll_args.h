// One operation as the algorithms see it. The API layer normalises the variants:
// AllGather, ReduceScatter and the all-to-all family arrive with explicit per-rank
// counts and displacements (in elements), so one algorithm serves the plain and V forms.
#pragma once

#include <cstdint>
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
    std::vector<uint64_t> sendCounts, sendDispls, recvCounts, recvDispls;
    std::vector<HcclSendRecvItem> items;  // BatchSendRecv
    uint64_t flightId = 0;  // the op's entry in the communicator's flight recorder (0: none)
};

}  // namespace hostccl
