// An opt-in c10 CPU allocator (hostccl.torch.use_shareable_memory) whose large
// blocks are hostccl "device" memory: aclrtMalloc's, which the other processes on
// the host can map. A collective on a tensor from it takes the direct algorithms
// (each rank reads its peers' buffers in place: one copy), where a tensor from
// torch's own allocator, which no peer can map, goes through the links' shared
// rings (a copy in and a copy out).
//
// Blocks below `minBytes` come from the allocator that was current before. Freed
// large blocks are kept for reuse by an allocation of the same size (a training
// step asks for the same sizes every step), up to `cacheBytes`: a new mapping would
// cost a memfd, an mmap and a page fault per page, and peers keep the mappings of
// blocks they have seen.
//
// The memory is MAP_SHARED: a process forked after the allocation shares it with its
// parent instead of getting a copy. Do not enable it in programs that fork workers
// which write to tensors made before the fork (DataLoader workers only read them).
#pragma once

#include <c10/core/Allocator.h>

#include <cstddef>
#include <cstdint>

namespace hostccl::torch_backend {

struct ShareableMemoryStats {
    uint64_t blocksAllocated = 0;  // aclrtMalloc calls
    uint64_t blocksReused = 0;     // allocations served from the cache
    uint64_t bytesCached = 0;      // freed blocks kept for reuse
    uint64_t bytesInUse = 0;       // large blocks handed out and not yet freed
};

// Makes the allocator torch's CPU allocator (again, with new limits, if it already
// is). Throws std::invalid_argument for minBytes == 0.
void useShareableMemory(size_t minBytes, size_t cacheBytes);
// Gives torch's CPU allocator back to the one current before; blocks handed out
// stay valid and return to the cache when freed.
void stopShareableMemory();
bool shareableMemoryActive();
ShareableMemoryStats shareableMemoryStats();

}  // namespace hostccl::torch_backend
