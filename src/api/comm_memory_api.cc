// Communicator memory entry points: zero-copy ranges and activated memory
// (HCCL Test -z), symmetric-memory windows (-m). The work is in core/comm_memory.cc.
#include "api/validate.h"
#include "hccl/hccl.h"

using namespace hostccl;
using namespace hostccl::api;

extern "C" {

HcclResult HcclCommSetMemoryRange(HcclComm comm, void* baseVirPtr, size_t size, size_t alignment, uint64_t flags) {
    Comm* c;
    HOSTCCL_CHECK(checkLive(comm, "HcclCommSetMemoryRange", &c));
    return c->memory().setRange(c->site("HcclCommSetMemoryRange"), baseVirPtr, size, alignment, flags);
}

HcclResult HcclCommUnsetMemoryRange(HcclComm comm, void* baseVirPtr) {
    Comm* c;
    HOSTCCL_CHECK(checkLive(comm, "HcclCommUnsetMemoryRange", &c));
    return c->memory().unsetRange(c->site("HcclCommUnsetMemoryRange"), baseVirPtr);
}

HcclResult HcclCommActivateCommMemory(HcclComm comm, void* virPtr, size_t size, size_t offset,
                                      aclrtDrvMemHandle handle, uint64_t flags) {
    Comm* c;
    HOSTCCL_CHECK(checkLive(comm, "HcclCommActivateCommMemory", &c));
    return c->memory().activate(c->site("HcclCommActivateCommMemory"), virPtr, size, offset, handle, flags);
}

HcclResult HcclCommDeactivateCommMemory(HcclComm comm, void* virPtr) {
    Comm* c;
    HOSTCCL_CHECK(checkLive(comm, "HcclCommDeactivateCommMemory", &c));
    return c->memory().deactivate(c->site("HcclCommDeactivateCommMemory"), virPtr);
}

HcclResult HcclCommSymWinRegister(HcclComm comm, void* addr, uint64_t size, HcclCommSymWindow* winHandle,
                                  uint32_t flag) {
    const char* fn = "HcclCommSymWinRegister";
    Comm* c;
    HOSTCCL_CHECK(checkComm(comm, fn, &c));
    if (winHandle == nullptr) return fail(HCCL_E_PTR, c->site(fn), "winHandle is NULL");
    const SymmetricWindow* w = nullptr;
    HOSTCCL_CHECK(c->memory().registerWindow(*c, addr, size, flag, &w));
    noteWindow(w, c);
    *winHandle = const_cast<SymmetricWindow*>(w);
    return HCCL_SUCCESS;
}

HcclResult HcclCommSymWinDeregister(HcclCommSymWindow winHandle) {
    if (winHandle == nullptr) return fail(HCCL_E_PTR, "HcclCommSymWinDeregister: winHandle is NULL");
    Comm* c = windowOwner(winHandle);
    if (c == nullptr || !commAlive(c))
        return fail(HCCL_E_PARA, "HcclCommSymWinDeregister: {} is not a registered window (deregistered twice?)", winHandle);
    forgetWindow(winHandle);
    c->memory().windows().remove(static_cast<const SymmetricWindow*>(winHandle));
    return HCCL_SUCCESS;
}

HcclResult HcclCommSymWinGet(HcclComm comm, void* ptr, size_t size, HcclCommSymWindow* winHandle, size_t* offset) {
    const char* fn = "HcclCommSymWinGet";
    Comm* c;
    HOSTCCL_CHECK(checkLive(comm, fn, &c));
    if (ptr == nullptr || winHandle == nullptr || offset == nullptr)
        return fail(HCCL_E_PTR, c->site(fn), "ptr, winHandle or offset is NULL");
    const SymmetricWindow* w = c->memory().windows().find(ptr, size);
    if (w == nullptr) return fail(HCCL_E_NOT_FOUND, c->site(fn), "[{}, +{}) lies in no registered window", ptr, size);
    *winHandle = const_cast<SymmetricWindow*>(w);
    *offset = static_cast<size_t>(static_cast<const char*>(ptr) - w->base);
    return HCCL_SUCCESS;
}

}  // extern "C"
