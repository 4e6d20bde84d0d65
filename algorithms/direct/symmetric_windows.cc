#include "algorithms/direct/symmetric_windows.h"

#include <algorithm>

namespace hostccl {

const SymmetricWindow* SymmetricWindows::add(SymmetricWindow w) {
    std::lock_guard<std::mutex> lock(mutex_);
    windows_.push_back(std::make_unique<SymmetricWindow>(std::move(w)));
    count_.store(windows_.size(), std::memory_order_release);
    return windows_.back().get();
}

bool SymmetricWindows::remove(const SymmetricWindow* w) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = std::find_if(windows_.begin(), windows_.end(), [&](const auto& p) { return p.get() == w; });
    if (it == windows_.end()) return false;
    windows_.erase(it);
    count_.store(windows_.size(), std::memory_order_release);
    return true;
}

const SymmetricWindow* SymmetricWindows::find(const void* p, uint64_t bytes) const {
    const char* at = static_cast<const char*>(p);
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& w : windows_) {
        if (bytes == 0 || at < w->base) continue;
        const uint64_t into = static_cast<uint64_t>(at - w->base);
        if (into < w->size && bytes <= w->size - into) return w.get();
    }
    return nullptr;
}

bool SymmetricWindows::overlapsAny(const void* p, uint64_t bytes) const {
    const char* at = static_cast<const char*>(p);
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& w : windows_)
        if (at < w->base + w->size && w->base < at + bytes) return true;
    return false;
}

const SymmetricWindow* SymmetricWindows::byId(uint64_t id) const {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& w : windows_)
        if (w->id == id) return w.get();
    return nullptr;
}

}  // namespace hostccl
