#include "api/validate.h"

#include "common/datatype.h"

namespace hostccl::api {

HcclResult checkLive(HcclComm comm, const char* fn, Comm** out) {
    if (comm == nullptr) return fail(HCCL_E_PTR, "{}: comm is NULL", fn);
    if (!commAlive(comm)) return fail(HCCL_E_PARA, "{}: comm {} is not a live communicator (destroyed or foreign)", fn, comm);
    *out = static_cast<Comm*>(comm);
    return HCCL_SUCCESS;
}

HcclResult checkComm(HcclComm comm, const char* fn, Comm** out) {
    HOSTCCL_CHECK(checkLive(comm, fn, out));
    return (*out)->refuseIfFailed(fn);
}

HcclResult checkStream(aclrtStream stream, const char* fn, std::shared_ptr<runtime::Stream>* out) {
    *out = runtime::resolveStream(stream);
    if (*out == nullptr) return fail(HCCL_E_PARA, "{}: stream {} is not a live stream", fn, stream);
    return HCCL_SUCCESS;
}

HcclResult checkType(HcclDataType dtype, const char* fn) {
    if (!dtypeValid(dtype)) return fail(HCCL_E_PARA, "{}: invalid data type {}", fn, static_cast<int>(dtype));
    return HCCL_SUCCESS;
}

HcclResult checkReduction(HcclDataType dtype, HcclReduceOp op, const char* fn) {
    HOSTCCL_CHECK(checkType(dtype, fn));
    if (!reduceOpValid(op)) return fail(HCCL_E_PARA, "{}: invalid reduce op {}", fn, static_cast<int>(op));
    if (!dtypeReducible(dtype))
        return fail(HCCL_E_NOT_SUPPORT, "{}: {} data can be moved but not reduced", fn, dtypeName(dtype));
    return HCCL_SUCCESS;
}

HcclResult checkBuffer(const void* buf, uint64_t count, uint64_t blocks, HcclDataType dtype, bool aligned,
                       const char* fn, const char* name) {
    const uint64_t es = dtypeSize(dtype);
    if (blocks == 0) blocks = 1;
    if (count > UINT64_MAX / es / blocks)
        return fail(HCCL_E_PARA, "{}: {} count {} x {} bytes overflows", fn, name, count, es * blocks);
    if (count > 0 && buf == nullptr) return fail(HCCL_E_PTR, "{}: {} is NULL", fn, name);
    if (aligned && count > 0 && reinterpret_cast<uintptr_t>(buf) % es != 0)
        return fail(HCCL_E_PARA, "{}: {} {} is not aligned to the {}-byte element", fn, name, buf, es);
    return HCCL_SUCCESS;
}

HcclResult checkRank(uint32_t rank, const Comm& c, const char* fn, const char* name) {
    if (rank >= c.size()) return fail(HCCL_E_PARA, c.site(fn), "{} {} is not below the rank count {}", name, rank, c.size());
    return HCCL_SUCCESS;
}

}  // namespace hostccl::api
