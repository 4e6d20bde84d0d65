// What a communicator knows about its users' memory:
// - zero-copy ranges (HcclCommSetMemoryRange): reserved virtual ranges its buffers
//   will come from, and the parts of them activated with physical memory
//   (HcclCommActivateCommMemory), checked against the runtime's mappings;
// - symmetric windows (HcclCommSymWinRegister), exchanged with every rank once and
//   used by the direct algorithms (algorithms/direct/symmetric_windows.h).
// Every call checks everything before it changes anything.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

#include "algorithms/direct/symmetric_windows.h"
#include "common/error.h"

namespace hostccl {

class Comm;

class CommMemory {
public:
    HcclResult setRange(const ErrorSite& s, void* base, size_t size, size_t alignment, uint64_t flags);
    HcclResult unsetRange(const ErrorSite& s, void* base);
    HcclResult activate(const ErrorSite& s, void* address, size_t size, size_t offset, void* handle, uint64_t flags);
    HcclResult deactivate(const ErrorSite& s, void* address);

    // Collective: every rank calls it with a window of the same size.
    HcclResult registerWindow(Comm& c, void* addr, uint64_t size, uint32_t flag,
                              const SymmetricWindow** out);
    SymmetricWindows& windows() { return windows_; }

private:
    mutable std::mutex mutex_;
    std::map<const char*, size_t> ranges_;      // base -> size
    std::map<const char*, size_t> activated_;   // address -> size
    SymmetricWindows windows_;
};

// Window handles (HcclCommSymWindow) name no communicator: this table does.
void noteWindow(const SymmetricWindow* w, Comm* c);
Comm* windowOwner(const void* handle);  // nullptr when not a live window
void forgetWindow(const void* handle);
void forgetWindowsOf(const Comm* c);

}  // namespace hostccl
