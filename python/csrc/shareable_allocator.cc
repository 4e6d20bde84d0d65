#include "shareable_allocator.h"

#include <c10/core/CPUAllocator.h>

#include <acl/acl.h>

#include <map>
#include <mutex>
#include <new>
#include <stdexcept>

namespace hostccl::torch_backend {

namespace {

constexpr size_t kPage = 4096;

size_t roundToPages(size_t n) { return (n + kPage - 1) / kPage * kPage; }

// One aclrtMalloc block; it travels as the DataPtr's context.
struct Block {
    void* p;
    size_t bytes;
};

class ShareableAllocator final : public c10::Allocator {
public:
    c10::DataPtr allocate(size_t n) const override {
        c10::Allocator* below = previous_;
        size_t minBytes;
        {
            std::lock_guard<std::mutex> lock(mutex_);
            minBytes = minBytes_;
        }
        if (n < minBytes) return below->allocate(n);
        Block* b = takeCached(roundToPages(n));
        if (b == nullptr) b = fresh(roundToPages(n));
        return {b->p, b, &ShareableAllocator::release, c10::Device(c10::DeviceType::CPU)};
    }

    void configure(size_t minBytes, size_t cacheBytes) {
        std::lock_guard<std::mutex> lock(mutex_);
        minBytes_ = minBytes;
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
    Block* takeCached(size_t bytes) const {
        std::lock_guard<std::mutex> lock(mutex_);
        auto it = cache_.find(bytes);
        if (it == cache_.end()) {
            stats_.bytesInUse += bytes;
            return nullptr;
        }
        Block* b = it->second;
        cache_.erase(it);
        stats_.bytesCached -= bytes;
        stats_.bytesInUse += bytes;
        ++stats_.blocksReused;
        return b;
    }

    Block* fresh(size_t bytes) const {
        void* p = nullptr;
        if (aclrtMalloc(&p, bytes, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) {
            // Blocks of other sizes in the cache may be what is missing.
            std::unique_lock<std::mutex> lock(mutex_);
            trimTo(0);
            lock.unlock();
            if (aclrtMalloc(&p, bytes, ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS) {
                lock.lock();
                stats_.bytesInUse -= bytes;
                throw std::bad_alloc();
            }
        }
        std::lock_guard<std::mutex> lock(mutex_);
        ++stats_.blocksAllocated;
        return new Block{p, bytes};
    }

    static void release(void* ctx) {
        Block* b = static_cast<Block*>(ctx);
        ShareableAllocator& a = instance();
        std::lock_guard<std::mutex> lock(a.mutex_);
        a.stats_.bytesInUse -= b->bytes;
        if (b->bytes > a.cacheBytes_) {
            freeBlock(b);
            return;
        }
        a.trimTo(a.cacheBytes_ - b->bytes);
        a.cache_.emplace(b->bytes, b);
        a.stats_.bytesCached += b->bytes;
    }

    // Frees cached blocks, largest first, until at most `limit` bytes stay. Under mutex_.
    void trimTo(size_t limit) const {
        while (stats_.bytesCached > limit && !cache_.empty()) {
            auto last = std::prev(cache_.end());
            stats_.bytesCached -= last->first;
            freeBlock(last->second);
            cache_.erase(last);
        }
    }

    static void freeBlock(Block* b) {
        aclrtFree(b->p);
        delete b;
    }

    mutable std::mutex mutex_;
    c10::Allocator* previous_ = nullptr;
    size_t minBytes_ = 0;
    size_t cacheBytes_ = 0;
    mutable std::multimap<size_t, Block*> cache_;  // freed blocks by size
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
