// Symmetric-memory windows (HcclCommSymWinRegister): every rank of a communicator
// registered a window of the same size, and the windows' descriptions were exchanged
// once. An op whose buffers lie in this rank's window finds each peer's buffer at the
// same offset of that peer's window, so the direct algorithms need no per-op
// exchange of buffer descriptions (they still check that every rank used the same
// offsets: a one-message arrival that carries them).
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "transports/shared_region.h"

namespace hostccl {

struct SymmetricWindow {
    uint64_t id;       // the n-th registration on the communicator: the same on every rank
    const char* base;  // this rank's window
    uint64_t size;
    std::vector<transport::SharedRegion> ranks;  // every rank's window, by rank
    bool shareable;  // every window can be mapped by every rank (else: the ordinary path)
};

class SymmetricWindows {
public:
    // Takes a window; the returned pointer is its handle until remove().
    const SymmetricWindow* add(SymmetricWindow w);
    bool remove(const SymmetricWindow* w);  // false when not one of ours
    // The window holding [p, p + bytes), or nullptr. Empty ranges are in no window.
    const SymmetricWindow* find(const void* p, uint64_t bytes) const;
    bool overlapsAny(const void* p, uint64_t bytes) const;
    const SymmetricWindow* byId(uint64_t id) const;
    bool empty() const { return count_.load(std::memory_order_acquire) == 0; }  // nullptr when not registered (any more)
    uint64_t nextId() { return ++lastId_; }

private:
    mutable std::mutex mutex_;  // registration runs beside ops on other streams
    std::vector<std::unique_ptr<SymmetricWindow>> windows_;
    uint64_t lastId_ = 0;
    std::atomic<size_t> count_{0};  // windows_.size(), read without the lock  // registrations are collective: every rank counts the same
};

}  // namespace hostccl
