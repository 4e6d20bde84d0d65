#include "bench/perf/perf_memory.h"

#include <CLI/CLI.hpp>

namespace hostccl::perf {

namespace {
aclrtPhysicalMemProp deviceProp() {
    aclrtPhysicalMemProp p{};
    p.handleType = ACL_MEM_HANDLE_TYPE_NONE;
    p.allocationType = ACL_MEM_ALLOCATION_TYPE_PINNED;
    p.memAttr = ACL_HBM_MEM_HUGE;
    p.location.type = ACL_MEM_LOCATION_TYPE_DEVICE;
    int32_t device = 0;
    aclrtGetDevice(&device);
    p.location.id = static_cast<uint32_t>(device);
    return p;
}

size_t granularity() {
    aclrtPhysicalMemProp p = deviceProp();
    size_t g = 0;
    return aclrtMemGetAllocationGranularity(&p, ACL_RT_MEM_ALLOC_GRANULARITY_RECOMMENDED, &g) == ACL_SUCCESS && g > 0
               ? g
               : size_t(2) << 20;
}

size_t roundUp(size_t v, size_t to) { return (v + to - 1) / to * to; }
}  // namespace

MemoryMode parseMemoryMode(const std::string& s) {
    if (s == "malloc") return MemoryMode::Malloc;
    if (s == "vmm") return MemoryMode::Vmm;
    if (s == "window") return MemoryMode::Window;
    throw CLI::ValidationError("--memory", "unknown memory mode " + s + " (malloc, vmm, window)");
}

bool PerfMemory::mapFresh(size_t bytes, Mapped* out) {
    Mapped m;
    m.bytes = roundUp(bytes == 0 ? 1 : bytes, granularity());
    aclrtPhysicalMemProp prop = deviceProp();
    if (aclrtReserveMemAddress(&m.va, m.bytes, 0, nullptr, 1) != ACL_SUCCESS) return false;
    if (aclrtMallocPhysical(&m.handle, m.bytes, &prop, 0) != ACL_SUCCESS ||
        aclrtMapMem(m.va, m.bytes, 0, m.handle, 0) != ACL_SUCCESS) {
        if (m.handle != nullptr) aclrtFreePhysical(m.handle);
        aclrtReleaseMemAddress(m.va);
        return false;
    }
    *out = m;
    return true;
}

void PerfMemory::unmapAll(Mapped* m) {
    if (m->va == nullptr) return;
    aclrtUnmapMem(m->va);
    aclrtFreePhysical(m->handle);
    aclrtReleaseMemAddress(m->va);
    *m = Mapped{};
}

PerfMemory::PerfMemory(MemoryMode mode, HcclComm comm, size_t largest) : mode_(mode) {
    if (mode_ != MemoryMode::Window) return;
    // Two halves, each able to hold the larger buffer of any call.
    half_ = roundUp(largest == 0 ? 1 : largest, 4096);
    ok_ = mapFresh(2 * half_, &window_) &&
          HcclCommSymWinRegister(comm, window_.va, window_.bytes, &registered_, 1) == HCCL_SUCCESS;
}

PerfMemory::~PerfMemory() {
    for (int slot = 0; slot < 2; ++slot) put(slot);
    if (registered_ != nullptr) HcclCommSymWinDeregister(registered_);
    unmapAll(&window_);
}

void* PerfMemory::get(int slot, size_t bytes) {
    switch (mode_) {
        case MemoryMode::Window:
            return bytes <= half_ && window_.va != nullptr ? static_cast<char*>(window_.va) + slot * half_ : nullptr;
        case MemoryMode::Vmm:
            return mapFresh(bytes, &slots_[slot]) ? slots_[slot].va : nullptr;
        case MemoryMode::Malloc:
            break;
    }
    return aclrtMalloc(&malloced_[slot], bytes == 0 ? 1 : bytes, ACL_MEM_MALLOC_HUGE_FIRST) == ACL_SUCCESS
               ? malloced_[slot]
               : nullptr;
}

void PerfMemory::put(int slot) {
    if (mode_ == MemoryMode::Vmm) unmapAll(&slots_[slot]);
    if (malloced_[slot] != nullptr) aclrtFree(malloced_[slot]);
    malloced_[slot] = nullptr;
}

}  // namespace hostccl::perf
