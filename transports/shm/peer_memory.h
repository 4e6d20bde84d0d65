// Access to a peer process's aclrtMalloc allocations on this host, for single-copy
// transfers (read) and the direct algorithms (read and write). Each allocation (its memfd, opened through
// /proc/<pid>/fd/<fd>) is mapped once and kept; allocation ids are unique, so a
// reused fd number can never alias an old mapping.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "transports/shm/shm_ring.h"

namespace hostccl::transport::shm {

class PeerMemory {
public:
    PeerMemory() = default;
    ~PeerMemory();
    PeerMemory(const PeerMemory&) = delete;
    PeerMemory& operator=(const PeerMemory&) = delete;

    // Where the region (of another process) lies in this process; nullptr (and
    // `why`) when its allocation cannot be mapped.
    char* resolve(const SharedRegion& r, std::string* why);

private:
    struct Mapping {
        uint64_t id;
        void* base;
        size_t size;
    };
    static constexpr size_t kMaxMappings = 64;  // least recently used are unmapped beyond this
    std::vector<Mapping> mappings_;             // most recently used first
};

}  // namespace hostccl::transport::shm
