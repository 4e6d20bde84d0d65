#include "shareable_allocator.h"

#include <c10/core/CPUAllocator.h>

#include <acl/acl.h>

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <new>
#include <stdexcept>
#include <unordered_map>

#include "torch_compat.h"

namespace hostccl::torch_backend {

namespace {

constexpr size_t kPage = 4096;

size_t roundToPages(size_t n) { return (n + kPage - 1) / kPage * kPage; }

// Blocks are handed out with the pointer as the DataPtr's context too, and one deleter
// for every pointer, as c10's raw_allocate / raw_deallocate require (oneDNN's scratch
// buffers come that way): a pointer this allocator did not hand out belongs to the
// allocator below it.
class ShareableAllocator final : public c10::Allocator {
public:
    c10::DataPtr allocate(size_t n) HOSTCCL_TORCH_ALLOCATE_CONST override {
        // Every CPU tensor comes through here: the small ones without taking the lock.
        if (n < minBytes_.load(std::memory_order_relaxed)) return previous_->allocate(n);
        void* p = obtain(roundToPages(n));
        return {p, p, &ShareableAllocator::release, c10::Device(c10::DeviceType::CPU)};
    }
    c10::DeleterFnPtr raw_deleter() const override { return &ShareableAllocator::release; }
#if HOSTCCL_TORCH2
    void copy_data(void* dest, const void* src, std::size_t count) const override {
        default_copy_data(dest, src, count);
    }
#endif

    void configure(size_t minBytes, size_t cacheBytes) {
        std::lock_guard<std::mutex> lock(mutex_);
        minBytes_.store(minBytes, std::memory_order_relaxed);
        cacheBytes_ = cacheBytes;
        trimTo(cacheBytes_);
    }
    void setPrevious(c10::Allocator* a) { previous_ = a; }
    c10::Allocator* previous() const { return previous_; }

    ShareableMemoryStats stats() const {
        std::lock_guard<std::mutex> lock(mutex_);
        return stats_;
    }

    static ShareableAllocator& instance() {
        static ShareableAllocator* a = new ShareableAllocator;  // outlives every tensor
        return *a;
    }

private:
    // A cached block of exactly `bytes`, else a new one.
    void* obtain(size_t bytes) const {
        {
            std::lock_guard<std::mutex> lock(mutex_);
            auto it = cache_.find(bytes);
            if (it != cache_.end()) {
                void* p = it->second;
                cache_.erase(it);
                stats_.bytesCached -= bytes;
                ++stats_.blocksReused;
                handOut(p, bytes);
                return p;
            }
        }
        void* p = nullptr;
        if (aclrtMalloc(&p, bytes, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) {
            {
                std::lock_guard<std::mutex> lock(mutex_);
                trimTo(0);  // blocks of other sizes in the cache may be what is missing
            }
            if (aclrtMalloc(&p, bytes, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) throw std::bad_alloc();
        }
        std::lock_guard<std::mutex> lock(mutex_);
        ++stats_.blocksAllocated;
        handOut(p, bytes);
        return p;
    }

    void handOut(void* p, size_t bytes) const {  // under mutex_
        live_.emplace(p, bytes);
        stats_.bytesInUse += bytes;
    }

    static void release(void* p) {
        ShareableAllocator& a = instance();
        std::unique_lock<std::mutex> lock(a.mutex_);
        auto it = a.live_.find(p);
        if (it == a.live_.end()) {  // the allocator below handed it out (raw_allocate)
            lock.unlock();
            a.previous_->raw_deleter()(p);
            return;
        }
        const size_t bytes = it->second;
        a.live_.erase(it);
        a.stats_.bytesInUse -= bytes;
        if (bytes > a.cacheBytes_) {
            aclrtFree(p);
            return;
        }
        a.trimTo(a.cacheBytes_ - bytes);
        a.cache_.emplace(bytes, p);
        a.stats_.bytesCached += bytes;
    }

    // Frees cached blocks, largest first, until at most `limit` bytes stay. Under mutex_.
    void trimTo(size_t limit) const {
        while (stats_.bytesCached > limit && !cache_.empty()) {
            auto last = std::prev(cache_.end());
            stats_.bytesCached -= last->first;
            aclrtFree(last->second);
            cache_.erase(last);
        }
    }

    mutable std::mutex mutex_;
    c10::Allocator* previous_ = nullptr;
    std::atomic<size_t> minBytes_{SIZE_MAX};
    size_t cacheBytes_ = 0;
    mutable std::unordered_map<void*, size_t> live_;  // handed out: pointer -> bytes
    mutable std::multimap<size_t, void*> cache_;      // freed blocks by size
    mutable ShareableMemoryStats stats_;
};

}  // namespace

void useShareableMemory(size_t minBytes, size_t cacheBytes) {
    if (minBytes == 0) throw std::invalid_argument("use_shareable_memory: min_bytes must be at least 1");
    ShareableAllocator& a = ShareableAllocator::instance();
    a.configure(minBytes, cacheBytes);
    if (c10::GetCPUAllocator() == &a) return;
    a.setPrevious(c10::GetCPUAllocator());
    // torch registers its own CPU allocator at priority 0; a higher one means another
    // library took the slot on purpose, and is left in place.
    c10::SetCPUAllocator(&a, 0);
    if (c10::GetCPUAllocator() != &a)
        throw std::runtime_error("use_shareable_memory: another library holds torch's CPU allocator at a higher priority");
}

void stopShareableMemory() {
    ShareableAllocator& a = ShareableAllocator::instance();
    if (c10::GetCPUAllocator() != &a) return;
    c10::SetCPUAllocator(a.previous(), 0);
}

bool shareableMemoryActive() { return c10::GetCPUAllocator() == &ShareableAllocator::instance(); }

ShareableMemoryStats shareableMemoryStats() { return ShareableAllocator::instance().stats(); }

}  // namespace hostccl::torch_backend
