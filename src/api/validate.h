// Argument checks shared by the C entry points. Each returns the precise
// HcclResult and logs which argument of which call was wrong; nothing is changed
// when a check fails.
#pragma once

#include "algorithms/coll_args.h"
#include "common/error.h"
#include "core/comm.h"
#include "runtime/stream.h"

namespace hostccl::api {

// A live communicator (not NULL, destroyed or foreign), whatever its state.
HcclResult checkLive(HcclComm comm, const char* fn, Comm** out);
// A live communicator that can still run ops (no earlier asynchronous error).
HcclResult checkComm(HcclComm comm, const char* fn, Comm** out);
HcclResult checkStream(aclrtStream stream, const char* fn, std::shared_ptr<runtime::Stream>* out);
// dtype valid; for reductions also op valid and (dtype, op) reducible.
HcclResult checkType(HcclDataType dtype, const char* fn);
HcclResult checkReduction(HcclDataType dtype, HcclReduceOp op, const char* fn);
// `count` elements of `dtype` times `blocks` must fit in 64 bits; the buffer must
// be non-NULL when anything is to be moved, and element-aligned when `aligned`.
HcclResult checkBuffer(const void* buf, uint64_t count, uint64_t blocks, HcclDataType dtype, bool aligned,
                       const char* fn, const char* name);
HcclResult checkRank(uint32_t rank, const Comm& c, const char* fn, const char* name);

}  // namespace hostccl::api
