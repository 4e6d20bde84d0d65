// The C entry points of ACL's virtual memory management (runtime/virtual_memory.h
// does the work). Nothing here throws across the C ABI.
#include "acl/acl.h"
#include "common/log.h"
#include "common/raw_enum.h"
#include "runtime/device.h"
#include "runtime/virtual_memory.h"

namespace vmm = hostccl::runtime::vmm;
using hostccl::rawEnum;

namespace {
aclError refuse(const char* fn, const std::string& why, aclError code = ACL_ERROR_INVALID_PARAM) {
    hostccl::log::error("{}: {}", fn, why);
    return code;
}

aclError toAcl(const char* fn, const vmm::Result& r) {
    switch (r.status) {
        case vmm::Status::Ok:
            return ACL_SUCCESS;
        case vmm::Status::NoMemory:
            return refuse(fn, r.why, ACL_ERROR_RT_MEMORY_ALLOCATION);
        case vmm::Status::Invalid:
            break;
    }
    return refuse(fn, r.why);
}

const char* propProblem(const aclrtPhysicalMemProp& prop) {
    if (rawEnum(prop.handleType) != ACL_MEM_HANDLE_TYPE_NONE) return "handleType must be ACL_MEM_HANDLE_TYPE_NONE";
    if (rawEnum(prop.allocationType) != ACL_MEM_ALLOCATION_TYPE_PINNED)
        return "allocationType must be ACL_MEM_ALLOCATION_TYPE_PINNED";
    const int attr = rawEnum(prop.memAttr);
    if (attr < ACL_DDR_MEM || attr > ACL_HBM_MEM_P2P_HUGE1G) return "memAttr is not an aclrtMemAttr";
    const int type = rawEnum(prop.location.type);
    if (type == ACL_MEM_LOCATION_TYPE_DEVICE) {
        if (!hostccl::runtime::deviceValid(static_cast<int32_t>(prop.location.id))) return "location.id is not a device";
    } else if (type != ACL_MEM_LOCATION_TYPE_HOST) {
        return "location.type must be ACL_MEM_LOCATION_TYPE_DEVICE or _HOST";
    }
    return nullptr;
}
}  // namespace

extern "C" {

aclError aclrtMemGetAllocationGranularity(aclrtPhysicalMemProp* prop, aclrtMemGranularityOptions option,
                                          size_t* granularity) {
    const char* fn = "aclrtMemGetAllocationGranularity";
    if (prop == nullptr || granularity == nullptr) return refuse(fn, "prop or granularity is NULL");
    if (const char* why = propProblem(*prop)) return refuse(fn, why);
    const int o = static_cast<int>(option);
    if (o != ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM && o != ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED)
        return refuse(fn, "option must be ACL_RT_MEM_ALLOC_GRANULARITY_MINIMUM or _RECOMMENDED");
    *granularity = vmm::kGranularity;
    return ACL_SUCCESS;
}

aclError aclrtReserveMemAddress(void** virPtr, size_t size, size_t alignment, void* expectPtr, uint64_t flags) {
    const char* fn = "aclrtReserveMemAddress";
    if (virPtr == nullptr) return refuse(fn, "virPtr is NULL");
    if (flags > 1) return refuse(fn, "flags must be 0 (normal pages) or 1 (huge pages)");
    return toAcl(fn, vmm::reserve(size, alignment, expectPtr, virPtr));
}

aclError aclrtReleaseMemAddress(void* virPtr) {
    if (virPtr == nullptr) return refuse("aclrtReleaseMemAddress", "virPtr is NULL");
    return toAcl("aclrtReleaseMemAddress", vmm::releaseReservation(virPtr));
}

aclError aclrtMallocPhysical(aclrtDrvMemHandle* handle, size_t size, const aclrtPhysicalMemProp* prop,
                             uint64_t flags) {
    const char* fn = "aclrtMallocPhysical";
    if (handle == nullptr || prop == nullptr) return refuse(fn, "handle or prop is NULL");
    if (const char* why = propProblem(*prop)) return refuse(fn, why);
    if (flags != 0) return refuse(fn, "flags must be 0");
    return toAcl(fn, vmm::createPhysical(size, handle));
}

aclError aclrtFreePhysical(aclrtDrvMemHandle handle) {
    if (handle == nullptr) return refuse("aclrtFreePhysical", "handle is NULL");
    return toAcl("aclrtFreePhysical", vmm::freePhysical(handle));
}

aclError aclrtMapMem(void* virPtr, size_t size, size_t offset, aclrtDrvMemHandle handle, uint64_t flags) {
    const char* fn = "aclrtMapMem";
    if (virPtr == nullptr || handle == nullptr) return refuse(fn, "virPtr or handle is NULL");
    if (flags != 0) return refuse(fn, "flags must be 0");
    return toAcl(fn, vmm::map(virPtr, size, offset, handle));
}

aclError aclrtUnmapMem(void* virPtr) {
    if (virPtr == nullptr) return refuse("aclrtUnmapMem", "virPtr is NULL");
    return toAcl("aclrtUnmapMem", vmm::unmap(virPtr));
}

}  // extern "C"
