#include "transports/rdma/registration_cache.h"

#include <iterator>

namespace hostccl::transport::rdma {

RegistrationCache::RegistrationCache(Registrar& registrar, size_t capacity, size_t pageSize)
    : registrar_(registrar), capacity_(capacity == 0 ? 1 : capacity), pageMask_(~uintptr_t(pageSize - 1)) {}

RegistrationCache::~RegistrationCache() {
    for (auto& [begin, r] : byBegin_) registrar_.deregister(r.handle);
}

const Registration* RegistrationCache::acquire(const void* addr, size_t len, std::string* why) {
    const uintptr_t a = reinterpret_cast<uintptr_t>(addr);
    const uintptr_t last = a + (len == 0 ? 1 : len);  // an empty range still needs a key
    // The registration starting at or before `a` with the highest begin is the only
    // one that can contain it (registrations do not overlap).
    auto it = byBegin_.upper_bound(a);
    if (it != byBegin_.begin()) {
        Registration& r = std::prev(it)->second;
        if (r.begin <= a && last <= r.end) {
            r.lastUse = ++clock_;
            ++hits_;
            return &r;
        }
    }
    ++misses_;
    Registration r;
    r.begin = a & pageMask_;
    r.end = (last + ~pageMask_) & pageMask_;
    // The new one replaces what it overlaps, unless posted work still uses that: then
    // the caller copies instead.
    if (overlapsPinned(r.begin, r.end)) {
        *why = "the range overlaps a registration still in use by posted work";
        return nullptr;
    }
    invalidate(reinterpret_cast<void*>(r.begin), r.end - r.begin);
    while (byBegin_.size() >= capacity_ && evictOldest()) {
    }
    r.handle = registrar_.registerMemory(reinterpret_cast<void*>(r.begin), r.end - r.begin, &r.lkey, &r.rkey, why);
    if (r.handle == nullptr) return nullptr;
    r.lastUse = ++clock_;
    r.id = ++lastId_;
    return &byBegin_.emplace(r.begin, r).first->second;
}

const Registration* RegistrationCache::acquirePinned(const void* addr, size_t len, RegistrationPin* pin,
                                                     std::string* why) {
    auto* r = const_cast<Registration*>(acquire(addr, len, why));
    if (r == nullptr) return nullptr;
    ++r->pins;
    *pin = {r->begin, r->id};
    return r;
}

void RegistrationCache::unpin(const RegistrationPin& pin) {
    auto it = byBegin_.find(pin.begin);
    if (it != byBegin_.end() && it->second.id == pin.id && it->second.pins > 0) --it->second.pins;
}

// The registrations overlapping [begin, end): the one starting before `begin` that
// reaches past it, then those starting inside.
std::map<uintptr_t, Registration>::iterator RegistrationCache::firstOverlap(uintptr_t begin) {
    auto it = byBegin_.upper_bound(begin);
    if (it != byBegin_.begin() && std::prev(it)->second.end > begin) --it;
    return it;
}

bool RegistrationCache::overlapsPinned(uintptr_t begin, uintptr_t end) {
    for (auto it = firstOverlap(begin); it != byBegin_.end() && it->second.begin < end; ++it)
        if (it->second.pins > 0) return true;
    return false;
}

void RegistrationCache::invalidate(const void* addr, size_t len) {
    const uintptr_t a = reinterpret_cast<uintptr_t>(addr), end = a + len;
    auto it = firstOverlap(a);
    while (it != byBegin_.end() && it->second.begin < end) {
        registrar_.deregister(it->second.handle);
        it = byBegin_.erase(it);
    }
}

bool RegistrationCache::evictOldest() {
    auto oldest = byBegin_.end();
    for (auto it = byBegin_.begin(); it != byBegin_.end(); ++it)
        if (it->second.pins == 0 && (oldest == byBegin_.end() || it->second.lastUse < oldest->second.lastUse))
            oldest = it;
    if (oldest == byBegin_.end()) return false;
    registrar_.deregister(oldest->second.handle);
    byBegin_.erase(oldest);
    return true;
}

}  // namespace hostccl::transport::rdma
