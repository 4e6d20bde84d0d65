// "Device" and pinned host memory. Allocations are backed by a memfd and mapped
// shared, so a peer process on this host can map the same pages (single-copy
// shared-memory transfers). The table answers "which allocation holds this pointer".
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

namespace hostccl::runtime {

struct Allocation {
    void* base;
    size_t size;
    int fd;       // memfd; a peer process maps it through /proc/<pid>/fd/<fd>
    uint64_t id;  // unique for the life of the process: fd numbers get reused, ids never
    // Where `base` lies in the memfd and how large the memfd is: 0 and `size` for
    // aclrtMalloc memory; a virtual-memory mapping may show part of a larger memfd.
    size_t fdOffset;
    size_t fdSize;
};

void* allocate(size_t size);         // nullptr on failure
bool release(void* base);            // false when base is not an aclrtMalloc allocation

// Mappings of physical memory into reserved ranges (runtime/virtual_memory.cc) join
// the table so every single-copy path finds them; `fd` stays owned by the caller.
void addMapping(void* base, size_t size, int fd, size_t fdOffset, size_t fdSize);
// Notifies the release observers and drops the entry; false when base is no mapping.
bool removeMapping(void* base);
std::optional<Allocation> findAllocation(const void* p);  // containing allocation
size_t bytesAllocated();

// Called by release() with the allocation's range before its pages are unmapped, so
// whoever keeps state about them (an RDMA registration pins the pages) drops it first.
// Observers are never removed: they belong to process-wide objects.
using ReleaseObserver = void (*)(const void* base, size_t size);
void addReleaseObserver(ReleaseObserver observer);

}  // namespace hostccl::runtime
