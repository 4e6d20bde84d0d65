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
};

void* allocate(size_t size);         // nullptr on failure
bool release(void* base);            // false when base is not an allocation
std::optional<Allocation> findAllocation(const void* p);  // containing allocation
size_t bytesAllocated();

// Called by release() with the allocation's range before its pages are unmapped, so
// whoever keeps state about them (an RDMA registration pins the pages) drops it first.
// Observers are never removed: they belong to process-wide objects.
using ReleaseObserver = void (*)(const void* base, size_t size);
void addReleaseObserver(ReleaseObserver observer);

}  // namespace hostccl::runtime
