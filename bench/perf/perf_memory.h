// Where a perf tool's buffers come from (--memory):
//   malloc  aclrtMalloc per buffer (the default);
//   vmm     ACL virtual memory per buffer: reserve, create physical memory, map;
//   window  one VMM region per rank, registered once as a symmetric window
//           (HcclCommSymWinRegister, as HCCL Test's -m), buffers carved from it.
#pragma once

#include <cstddef>
#include <string>

#include "hccl/hccl.h"

namespace hostccl::perf {

enum class MemoryMode { Malloc, Vmm, Window };
MemoryMode parseMemoryMode(const std::string& s);  // throws CLI::ValidationError

class PerfMemory {
public:
    // `largest`: the most bytes the two buffers of one call take together (window mode
    // reserves that once). Collective in window mode: every rank of `comm` constructs one.
    PerfMemory(MemoryMode mode, HcclComm comm, size_t largest);
    ~PerfMemory();
    PerfMemory(const PerfMemory&) = delete;
    PerfMemory& operator=(const PerfMemory&) = delete;

    bool ok() const { return ok_; }
    // Buffer `slot` (0 or 1) of at least `bytes`; nullptr on failure.
    void* get(int slot, size_t bytes);
    void put(int slot);  // gives buffer `slot` back (a no-op in window mode)

private:
    struct Mapped {
        void* va = nullptr;
        void* handle = nullptr;
        size_t bytes = 0;
    };
    static bool mapFresh(size_t bytes, Mapped* out);
    static void unmapAll(Mapped* m);

    MemoryMode mode_;
    bool ok_ = true;
    Mapped window_;
    HcclCommSymWindow registered_ = nullptr;
    size_t half_ = 0;    // window mode: where buffer 1 starts
    Mapped slots_[2];    // vmm mode
    void* malloced_[2] = {nullptr, nullptr};
};

}  // namespace hostccl::perf
