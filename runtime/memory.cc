#include "runtime/memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <vector>

namespace hostccl::runtime {

namespace {
struct Entry {
    Allocation allocation;
    bool owned;  // aclrtMalloc's (unmapped and closed on release), or a mapping's
};
struct AllocationTable {
    std::mutex mutex;
    std::map<const char*, Entry> byBase;  // ordered: lookups by containing range
    size_t total = 0;
    uint64_t lastId = 0;
};
AllocationTable& allocationTable() {
    static AllocationTable* t = new AllocationTable;
    return *t;
}

struct Observers {
    std::mutex mutex;
    std::vector<ReleaseObserver> list;
};
Observers& observers() {
    static Observers* o = new Observers;
    return *o;
}

void notifyRelease(const Allocation& a) {
    std::vector<ReleaseObserver> list;
    {
        std::lock_guard<std::mutex> lock(observers().mutex);
        list = observers().list;
    }
    for (ReleaseObserver observer : list) observer(a.base, a.size);
}
}  // namespace

void* allocate(size_t size) {
    if (size == 0) return nullptr;
    int fd = memfd_create("hostccl-mem", MFD_CLOEXEC);
    if (fd < 0) return nullptr;
    if (ftruncate(fd, static_cast<off_t>(size)) != 0) {
        close(fd);
        return nullptr;
    }
    void* p = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        close(fd);
        return nullptr;
    }
    AllocationTable& t = allocationTable();
    std::lock_guard<std::mutex> lock(t.mutex);
    t.byBase.emplace(static_cast<const char*>(p), Entry{Allocation{p, size, fd, ++t.lastId, 0, size}, true});
    t.total += size;
    return p;
}

namespace {
// Takes base's entry out of the table when it is of the wanted kind.
std::optional<Allocation> takeEntry(void* base, bool owned) {
    AllocationTable& t = allocationTable();
    std::lock_guard<std::mutex> lock(t.mutex);
    auto it = t.byBase.find(static_cast<const char*>(base));
    if (it == t.byBase.end() || it->second.owned != owned) return std::nullopt;
    Allocation a = it->second.allocation;
    t.total -= a.size;
    t.byBase.erase(it);
    return a;
}
}  // namespace

bool release(void* base) {
    std::optional<Allocation> a = takeEntry(base, true);
    if (!a) return false;
    notifyRelease(*a);
    munmap(a->base, a->size);
    close(a->fd);
    return true;
}

void addMapping(void* base, size_t size, int fd, size_t fdOffset, size_t fdSize) {
    AllocationTable& t = allocationTable();
    std::lock_guard<std::mutex> lock(t.mutex);
    t.byBase.emplace(static_cast<const char*>(base), Entry{Allocation{base, size, fd, ++t.lastId, fdOffset, fdSize}, false});
    t.total += size;
}

bool removeMapping(void* base) {
    std::optional<Allocation> a = takeEntry(base, false);
    if (!a) return false;
    notifyRelease(*a);
    return true;
}

void addReleaseObserver(ReleaseObserver observer) {
    std::lock_guard<std::mutex> lock(observers().mutex);
    observers().list.push_back(observer);
}

std::optional<Allocation> findAllocation(const void* p) {
    AllocationTable& t = allocationTable();
    std::lock_guard<std::mutex> lock(t.mutex);
    auto it = t.byBase.upper_bound(static_cast<const char*>(p));
    if (it == t.byBase.begin()) return std::nullopt;
    --it;
    const char* base = it->first;
    if (static_cast<const char*>(p) < base + it->second.allocation.size) return it->second.allocation;
    return std::nullopt;
}

size_t bytesAllocated() {
    std::lock_guard<std::mutex> lock(allocationTable().mutex);
    return allocationTable().total;
}

}  // namespace hostccl::runtime
