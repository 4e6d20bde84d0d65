// A range of one rank's memory, described so that a rank on the same host can map
// it: a thread of the owner's process uses the address as is; another process
// maps the owner's aclrtMalloc allocation (a memfd) through /proc/<pid>/fd/<fd>.
// Single-copy transfers and the direct (all-pairs) algorithms both pass these.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hostccl::transport {

struct SharedRegion {
    uint64_t address;       // in the owner's address space
    uint64_t bytes;
    uint64_t allocationId;  // the owner's aclrtMalloc allocation; 0 = not inside one
    uint64_t allocationOffset;
    uint64_t allocationSize;
    int32_t pid;
    int32_t fd;  // the allocation's memfd in the owner's process
};
static_assert(sizeof(SharedRegion) == 48, "wire layout");

SharedRegion describeRegion(const void* p, size_t bytes);

// Whether a process other than the owner can map the region (it lies wholly inside
// an aclrtMalloc allocation); threads of the owner's process can always use it.
inline bool mappableByOtherProcesses(const SharedRegion& r) { return r.allocationId != 0; }

}  // namespace hostccl::transport
