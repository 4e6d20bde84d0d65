#include "runtime/virtual_memory.h"

#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>

#include "runtime/memory.h"

namespace hostccl::runtime::vmm {

namespace {

struct Physical {
    int fd;
    size_t size;
    int mappings = 0;
    bool freed = false;  // the handle is gone; the fd closes with the last mapping
};

struct Mapping {
    size_t size;
    size_t offset;
    std::shared_ptr<Physical> physical;
};

struct Tables {
    std::mutex mutex;
    std::map<const char*, size_t> reservations;  // base -> size
    std::map<const char*, Mapping> mappings;     // address -> mapping
    std::map<void*, std::shared_ptr<Physical>> handles;
};
Tables& tables() {
    static Tables* t = new Tables;  // never destroyed: used until the process ends
    return *t;
}

Result invalid(std::string why) { return Result{Status::Invalid, std::move(why)}; }
Result noMemory(std::string why) { return Result{Status::NoMemory, std::move(why)}; }

bool granular(size_t v) { return v % kGranularity == 0; }
const char* at(const void* p) { return static_cast<const char*>(p); }

// The reservation holding [p, p + size), or end().
std::map<const char*, size_t>::const_iterator reservationOf(const Tables& t, const void* p, size_t size) {
    auto it = t.reservations.upper_bound(at(p));
    if (it == t.reservations.begin()) return t.reservations.end();
    --it;
    const size_t into = static_cast<size_t>(at(p) - it->first);
    if (into >= it->second || size > it->second - into) return t.reservations.end();
    return it;
}

// Whether any mapping meets [p, p + size).
bool overlapsMapping(const Tables& t, const char* p, size_t size) {
    auto it = t.mappings.lower_bound(p + size);
    if (it == t.mappings.begin()) return false;
    --it;
    return it->first + it->second.size > p;
}

// An inaccessible, page-less range of `size` bytes aligned to `align`, at `hint`
// when that is free and aligned.
void* reserveAligned(size_t size, size_t align, void* hint) {
    constexpr int kFlags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
    if (hint != nullptr && reinterpret_cast<uintptr_t>(hint) % align == 0) {
        void* p = mmap(hint, size, PROT_NONE, kFlags | MAP_FIXED_NOREPLACE, -1, 0);
        if (p == hint) return p;
        if (p != MAP_FAILED) munmap(p, size);
    }
    void* raw = mmap(nullptr, size + align, PROT_NONE, kFlags, -1, 0);
    if (raw == MAP_FAILED) return nullptr;
    const uintptr_t start = (reinterpret_cast<uintptr_t>(raw) + align - 1) / align * align;
    const size_t head = start - reinterpret_cast<uintptr_t>(raw), tail = align - head;
    if (head > 0) munmap(raw, head);
    if (tail > 0) munmap(reinterpret_cast<char*>(start) + size, tail);
    return reinterpret_cast<void*>(start);
}

}  // namespace

Result reserve(size_t size, size_t alignment, void* hint, void** out) {
    if (size == 0 || !granular(size))
        return invalid(fmt::format("size {} is not a positive multiple of the granularity {}", size, kGranularity));
    if (alignment != 0 && (alignment & (alignment - 1)) != 0)
        return invalid(fmt::format("alignment {} is not 0 or a power of two", alignment));
    const size_t align = alignment > kGranularity ? alignment : kGranularity;
    if (size > SIZE_MAX - align) return invalid(fmt::format("size {} is too large", size));
    void* p = reserveAligned(size, align, hint);
    if (p == nullptr) return noMemory(fmt::format("cannot reserve {} bytes of addresses: {}", size, std::strerror(errno)));
    Tables& t = tables();
    std::lock_guard<std::mutex> lock(t.mutex);
    t.reservations.emplace(at(p), size);
    *out = p;
    return {};
}

Result releaseReservation(void* base) {
    Tables& t = tables();
    std::lock_guard<std::mutex> lock(t.mutex);
    auto it = t.reservations.find(at(base));
    if (it == t.reservations.end()) return invalid(fmt::format("{} is not the start of a reserved range", base));
    if (overlapsMapping(t, it->first, it->second))
        return invalid(fmt::format("the range at {} still has memory mapped in it (aclrtUnmapMem first)", base));
    munmap(base, it->second);
    t.reservations.erase(it);
    return {};
}

Result createPhysical(size_t size, void** handle) {
    if (size == 0 || !granular(size))
        return invalid(fmt::format("size {} is not a positive multiple of the granularity {}", size, kGranularity));
    int fd = memfd_create("hostccl-physical", MFD_CLOEXEC);
    if (fd < 0) return noMemory(fmt::format("memfd_create: {}", std::strerror(errno)));
    if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
        const int e = errno;
        close(fd);
        return noMemory(fmt::format("cannot size physical memory to {} bytes: {}", size, std::strerror(e)));
    }
    auto physical = std::make_shared<Physical>(Physical{fd, size});
    Tables& t = tables();
    std::lock_guard<std::mutex> lock(t.mutex);
    t.handles.emplace(physical.get(), physical);
    *handle = physical.get();
    return {};
}

Result freePhysical(void* handle) {
    Tables& t = tables();
    std::lock_guard<std::mutex> lock(t.mutex);
    auto it = t.handles.find(handle);
    if (it == t.handles.end()) return invalid(fmt::format("{} is not a live physical memory handle", handle));
    Physical& p = *it->second;
    p.freed = true;
    if (p.mappings == 0) close(p.fd);
    t.handles.erase(it);
    return {};
}

Result map(void* address, size_t size, size_t offset, void* handle) {
    Tables& t = tables();
    std::lock_guard<std::mutex> lock(t.mutex);
    auto h = t.handles.find(handle);
    if (h == t.handles.end()) return invalid(fmt::format("{} is not a live physical memory handle", handle));
    const std::shared_ptr<Physical> physical = h->second;
    if (size == 0 || !granular(size) || !granular(offset) || reinterpret_cast<uintptr_t>(address) % kGranularity != 0)
        return invalid(fmt::format("address {}, size {} and offset {} must be multiples of {} (size > 0)", address, size,
                                   offset, kGranularity));
    if (offset > physical->size || size > physical->size - offset)
        return invalid(fmt::format("offset {} + size {} exceed the physical memory's {} bytes", offset, size,
                                   physical->size));
    if (reservationOf(t, address, size) == t.reservations.end())
        return invalid(fmt::format("[{}, +{}) is not inside one reserved range", address, size));
    if (overlapsMapping(t, at(address), size))
        return invalid(fmt::format("[{}, +{}) overlaps memory already mapped there", address, size));
    void* p = mmap(address, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, physical->fd, static_cast<off_t>(offset));
    if (p == MAP_FAILED) return noMemory(fmt::format("cannot map physical memory: {}", std::strerror(errno)));
    t.mappings.emplace(at(address), Mapping{size, offset, physical});
    ++physical->mappings;
    addMapping(address, size, physical->fd, offset, physical->size);
    return {};
}

Result unmap(void* address) {
    Tables& t = tables();
    std::lock_guard<std::mutex> lock(t.mutex);
    auto it = t.mappings.find(at(address));
    if (it == t.mappings.end()) return invalid(fmt::format("{} is not where a mapping begins", address));
    const Mapping m = it->second;
    removeMapping(address);  // observers (RDMA registrations) let go first
    // Back to reserved, page-less addresses.
    mmap(address, m.size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED, -1, 0);
    t.mappings.erase(it);
    if (--m.physical->mappings == 0 && m.physical->freed) close(m.physical->fd);
    return {};
}

bool mappedFrom(const void* address, size_t size, size_t offset, void* handle) {
    Tables& t = tables();
    std::lock_guard<std::mutex> lock(t.mutex);
    auto it = t.mappings.upper_bound(at(address));
    if (it == t.mappings.begin()) return false;
    --it;
    const Mapping& m = it->second;
    const size_t into = static_cast<size_t>(at(address) - it->first);
    return m.physical.get() == handle && into < m.size && size <= m.size - into && m.offset + into == offset;
}

bool insideReservation(const void* address, size_t size) {
    Tables& t = tables();
    std::lock_guard<std::mutex> lock(t.mutex);
    return size > 0 && reservationOf(t, address, size) != t.reservations.end();
}

}  // namespace hostccl::runtime::vmm
