// The rest of hccl_comm.h: the expansion-mode query, and the device-side recovery and
// NIC-switching calls, which have no host counterpart (HCCL_E_NOT_SUPPORT, with why).
#include "api/validate.h"
#include "hccl/hccl.h"
#include "runtime/device.h"

#include <cstring>

using namespace hostccl;
using namespace hostccl::api;

namespace {
HcclResult notOnHost(const char* fn, const char* why) { return fail(HCCL_E_NOT_SUPPORT, "{}: {}", fn, why); }
}  // namespace

extern "C" {

HcclResult HcclConfigGetInfo(HcclComm comm, HcclConfigType cfgType, uint32_t infoLen, void* info) {
    const char* fn = "HcclConfigGetInfo";
    Comm* c;
    HOSTCCL_CHECK(checkLive(comm, fn, &c));
    if (info == nullptr) return fail(HCCL_E_PTR, c->site(fn), "info is NULL");
    if (static_cast<int>(cfgType) != HCCL_CONFIG_TYPE_OP_EXPANSION_MODE)
        return fail(HCCL_E_PARA, c->site(fn), "cfgType {} is not HCCL_CONFIG_TYPE_OP_EXPANSION_MODE", static_cast<int>(cfgType));
    if (infoLen != sizeof(HcclOpExpansionMode))
        return fail(HCCL_E_PARA, c->site(fn), "infoLen {} is not sizeof(HcclOpExpansionMode)", infoLen);
    // Whatever mode was asked for, operators are expanded and run by host threads.
    *static_cast<HcclOpExpansionMode*>(info) = HCCL_OP_EXPANSION_MODE_HOST;
    return HCCL_SUCCESS;
}

HcclResult HcclCommSuspend(HcclComm) {
    return notOnHost("HcclCommSuspend", "suspending after a device memory error (UCE) has no host counterpart; "
                                        "HostcclCommAbort / HostcclCommShrink recover from failed ranks");
}

HcclResult HcclCommResume(HcclComm) {
    return notOnHost("HcclCommResume", "resuming after aclrtDeviceTaskAbort has no host counterpart");
}

HcclResult HcclCommRegCommStateCallback(const char*, HcclCommStateCallback, void*) {
    return notOnHost("HcclCommRegCommStateCallback", "its phases are those of HcclCommSuspend/Resume, not supported here");
}

// A communicator found by name is ready, or invalid once it has failed (a suspended
// state cannot happen here).
HcclResult HcclCommGetStatus(const char* commId, HcclCommStatus* status) {
    const char* fn = "HcclCommGetStatus";
    if (commId == nullptr || status == nullptr) return fail(HCCL_E_PTR, "{}: commId or status is NULL", fn);
    Comm* c = findCommByName(std::string(commId, strnlen(commId, COMM_NAME_MAX_LENGTH)), runtime::currentDevice());
    if (c == nullptr) return fail(HCCL_E_NOT_FOUND, "{}: no communicator named '{}'", fn, commId);
    *status = c->asyncError() == HCCL_SUCCESS ? HCCL_COMM_STATUS_READY : HCCL_COMM_STATUS_INVALID;
    return HCCL_SUCCESS;
}

HcclResult HcclCommWorkingDevNicSet(HcclComm, uint32_t*, bool*, uint32_t) {
    return notOnHost("HcclCommWorkingDevNicSet", "switching a device to its backup NIC has no host counterpart");
}

}  // extern "C"
