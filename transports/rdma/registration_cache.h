// Memory registrations kept across ops. Registering memory with the NIC pins its
// pages and costs far more than a small transfer, so a buffer (typically from
// aclrtMalloc, reused every step) is registered once and found again by address.
// Registrations cover whole pages; the least recently used is released when the
// cache is full; invalidate() drops every registration touching freed memory (the
// same addresses may come back as other pages). A registration in use by posted
// work is pinned: eviction passes it over (the cache grows past its capacity rather
// than pull keys from under a transfer) and a wider range overlapping it is refused
// rather than replace it; freeing the memory still drops it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>

namespace hostccl::transport::rdma {

// What registers memory: ibv_reg_mr on a device, or a fake in tests.
class Registrar {
public:
    virtual ~Registrar() = default;
    // A handle (nullptr with `why` on failure) and the keys of [addr, addr + len).
    virtual void* registerMemory(void* addr, size_t len, uint32_t* lkey, uint32_t* rkey, std::string* why) = 0;
    virtual void deregister(void* handle) = 0;
};

struct Registration {
    uintptr_t begin = 0, end = 0;  // page-aligned
    void* handle = nullptr;
    uint32_t lkey = 0, rkey = 0;
    uint64_t lastUse = 0;
    uint64_t id = 0;    // unique per registration: a pin names the one it holds
    uint32_t pins = 0;
};

// What unpin() needs: which registration, and which incarnation of it.
struct RegistrationPin {
    uintptr_t begin = 0;
    uint64_t id = 0;  // 0: no pin
};

class RegistrationCache {
public:
    explicit RegistrationCache(Registrar& registrar, size_t capacity = 64, size_t pageSize = 4096);
    ~RegistrationCache();  // deregisters everything
    RegistrationCache(const RegistrationCache&) = delete;
    RegistrationCache& operator=(const RegistrationCache&) = delete;

    // A registration covering [addr, addr + len): found, or made (nullptr with `why`
    // when the registrar refuses). Valid until the next acquire() or invalidate().
    const Registration* acquire(const void* addr, size_t len, std::string* why);
    // acquire() and pin the result until unpin(); a pin whose registration was
    // invalidated meanwhile is ignored.
    const Registration* acquirePinned(const void* addr, size_t len, RegistrationPin* pin, std::string* why);
    void unpin(const RegistrationPin& pin);
    // Forgets every registration overlapping [addr, addr + len).
    void invalidate(const void* addr, size_t len);

    size_t size() const { return byBegin_.size(); }
    uint64_t hits() const { return hits_; }
    uint64_t misses() const { return misses_; }

private:
    bool evictOldest();  // false when every registration is pinned
    std::map<uintptr_t, Registration>::iterator firstOverlap(uintptr_t begin);
    bool overlapsPinned(uintptr_t begin, uintptr_t end);

    Registrar& registrar_;
    const size_t capacity_;
    const uintptr_t pageMask_;
    std::map<uintptr_t, Registration> byBegin_;
    uint64_t clock_ = 0, hits_ = 0, misses_ = 0, lastId_ = 0;
};

}  // namespace hostccl::transport::rdma
