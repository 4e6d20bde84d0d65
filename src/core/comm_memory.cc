#include "core/comm_memory.h"

#include <vector>

#include "core/comm.h"
#include "runtime/virtual_memory.h"

namespace hostccl {

namespace {
const char* at(const void* p) { return static_cast<const char*>(p); }

// The entry of `m` whose range meets [p, p + size), or end(). A size running past
// the address space is cut at its end.
template <typename Map>
typename Map::const_iterator meeting(const Map& m, const char* p, size_t size) {
    const uintptr_t end = reinterpret_cast<uintptr_t>(p) > UINTPTR_MAX - size ? UINTPTR_MAX : reinterpret_cast<uintptr_t>(p) + size;
    auto it = m.lower_bound(reinterpret_cast<const char*>(end));
    if (it == m.begin()) return m.end();
    --it;
    return it->first + it->second > p ? it : m.end();
}

// Inside one entry of `m` wholly.
template <typename Map>
bool inside(const Map& m, const char* p, size_t size) {
    auto it = meeting(m, p, size);
    return it != m.end() && p >= it->first && size <= it->second - size_t(p - it->first);
}
}  // namespace

HcclResult CommMemory::setRange(const ErrorSite& s, void* base, size_t size, size_t alignment, uint64_t flags) {
    if (base == nullptr) return fail(HCCL_E_PTR, s, "baseVirPtr is NULL");
    if (alignment != 0 || flags != 0) return fail(HCCL_E_PARA, s, "alignment and flags must be 0 (got {}, {})", alignment, flags);
    if (size == 0 || !runtime::vmm::insideReservation(base, size))
        return fail(HCCL_E_PARA, s, "[{}, +{}) is not inside a range reserved with aclrtReserveMemAddress", base, size);
    std::lock_guard<std::mutex> lock(mutex_);
    if (meeting(ranges_, at(base), size) != ranges_.end())
        return fail(HCCL_E_PARA, s, "[{}, +{}) overlaps a memory range already set", base, size);
    ranges_.emplace(at(base), size);
    return HCCL_SUCCESS;
}

HcclResult CommMemory::unsetRange(const ErrorSite& s, void* base) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = ranges_.find(at(base));
    if (it == ranges_.end()) return fail(HCCL_E_PARA, s, "{} is not the base of a memory range set on this communicator", base);
    if (meeting(activated_, it->first, it->second) != activated_.end())
        return fail(HCCL_E_PARA, s, "memory in the range at {} is still activated (deactivate it first)", base);
    ranges_.erase(it);
    return HCCL_SUCCESS;
}

HcclResult CommMemory::activate(const ErrorSite& s, void* address, size_t size, size_t offset, void* handle,
                                uint64_t flags) {
    if (address == nullptr || handle == nullptr) return fail(HCCL_E_PTR, s, "virPtr or handle is NULL");
    if (flags != 0) return fail(HCCL_E_PARA, s, "flags must be 0 (got {})", flags);
    if (size == 0) return fail(HCCL_E_PARA, s, "size is 0");
    std::lock_guard<std::mutex> lock(mutex_);
    if (!inside(ranges_, at(address), size))
        return fail(HCCL_E_PARA, s, "[{}, +{}) is not inside a memory range set on this communicator", address, size);
    if (meeting(activated_, at(address), size) != activated_.end())
        return fail(HCCL_E_PARA, s, "[{}, +{}) overlaps memory already activated", address, size);
    if (!runtime::vmm::mappedFrom(address, size, offset, handle))
        return fail(HCCL_E_PARA, s, "[{}, +{}) is not mapped from handle {} at offset {} (aclrtMapMem first)", address,
                    size, handle, offset);
    activated_.emplace(at(address), size);
    return HCCL_SUCCESS;
}

HcclResult CommMemory::deactivate(const ErrorSite& s, void* address) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (activated_.erase(at(address)) == 0)
        return fail(HCCL_E_PARA, s, "{} is not where memory activated on this communicator begins", address);
    return HCCL_SUCCESS;
}

HcclResult CommMemory::registerWindow(Comm& c, void* addr, uint64_t size, uint32_t flag,
                                      const SymmetricWindow** out) {
    const ErrorSite s = c.site("HcclCommSymWinRegister");
    if (addr == nullptr) return fail(HCCL_E_PTR, s, "addr is NULL");
    if (flag != 1) return fail(HCCL_E_PARA, s, "flag must be 1 (got {})", flag);
    if (size == 0 || size > UINTPTR_MAX - reinterpret_cast<uintptr_t>(addr))
        return fail(HCCL_E_PARA, s, "size {} is 0 or runs past the address space", size);
    if (windows_.overlapsAny(addr, size)) return fail(HCCL_E_PARA, s, "[{}, +{}) overlaps a window already registered", addr, size);
    // Every rank learns every window in one allgather of fixed-size records.
    struct Record {
        transport::SharedRegion region;
        uint64_t size;
    };
    const Record mine{transport::describeRegion(addr, size), size};
    std::vector<Record> all(c.size());
    CollArgs a;
    a.type = CollType::AllGather;
    a.sendBuf = &mine;
    a.recvBuf = all.data();
    a.count = sizeof(Record);
    a.dtype = HCCL_DATA_TYPE_INT8;
    a.recvCounts.assign(c.size(), sizeof(Record));
    for (uint32_t r = 0; r < c.size(); ++r) a.recvDispls.push_back(uint64_t(r) * sizeof(Record));
    HOSTCCL_CHECK(c.execute(a));
    SymmetricWindow w{0, at(addr), size, {}, true};
    for (uint32_t r = 0; r < c.size(); ++r) {
        if (all[r].size != size)
            return fail(HCCL_E_PARA, s, "rank {} registered a window of {} bytes, this rank {}: windows must be symmetric", r,
                        all[r].size, size);
        w.ranks.push_back(all[r].region);
        w.shareable = w.shareable && (c.view().singleProcess || transport::mappableByOtherProcesses(all[r].region));
    }
    w.id = windows_.nextId();  // only registrations that succeeded on every rank count
    *out = windows_.add(std::move(w));
    return HCCL_SUCCESS;
}

namespace {
struct WindowOwners {
    std::mutex mutex;
    std::map<const void*, Comm*> owners;
};
WindowOwners& owners() {
    static WindowOwners* o = new WindowOwners;
    return *o;
}
}  // namespace

void noteWindow(const SymmetricWindow* w, Comm* c) {
    std::lock_guard<std::mutex> lock(owners().mutex);
    owners().owners[w] = c;
}

Comm* windowOwner(const void* handle) {
    std::lock_guard<std::mutex> lock(owners().mutex);
    auto it = owners().owners.find(handle);
    return it == owners().owners.end() ? nullptr : it->second;
}

void forgetWindow(const void* handle) {
    std::lock_guard<std::mutex> lock(owners().mutex);
    owners().owners.erase(handle);
}

void forgetWindowsOf(const Comm* c) {
    std::lock_guard<std::mutex> lock(owners().mutex);
    for (auto it = owners().owners.begin(); it != owners().owners.end();)
        it = it->second == c ? owners().owners.erase(it) : std::next(it);
}

}  // namespace hostccl
