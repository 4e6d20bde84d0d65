#include "transports/shm/shm_segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <map>
#include <mutex>
#include <new>

#include "common/siphash.h"

namespace hostccl::transport::shm {

namespace {
std::shared_ptr<Segment> mapFd(int fd, std::string* err) {
    void* p = mmap(nullptr, sizeof(Segment), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (p == MAP_FAILED) {
        *err = std::string("mmap: ") + std::strerror(errno);
        return nullptr;
    }
    return std::shared_ptr<Segment>(static_cast<Segment*>(p), [](Segment* s) { munmap(s, sizeof(Segment)); });
}

// This process's mappings by segment name, for a peer in the same process.
struct Mapped {
    std::mutex mutex;
    std::map<std::string, std::weak_ptr<Segment>> byName;
};
Mapped& mapped() {
    static Mapped* m = new Mapped;
    return *m;
}

void remember(const std::string& name, const std::shared_ptr<Segment>& seg) {
    std::lock_guard<std::mutex> lock(mapped().mutex);
    auto& byName = mapped().byName;
    for (auto it = byName.begin(); it != byName.end();) it = it->second.expired() ? byName.erase(it) : std::next(it);
    byName[name] = seg;
}

// Fresh pages are zero; the counters are made explicit atomics all the same.
void initWords(Segment* seg) {
    for (Bell& b : seg->bell) {
        new (&b.rings) std::atomic<uint32_t>(0);
        new (&b.asleep) std::atomic<uint32_t>(0);
    }
    for (Ring& r : seg->ring) {
        new (&r.head.value) std::atomic<uint64_t>(0);
        new (&r.tail.value) std::atomic<uint64_t>(0);
        new (&r.acked.value) std::atomic<uint64_t>(0);
        for (uint64_t n = 0; n < kSlots; ++n) new (&r.header(n)->stamp) std::atomic<uint32_t>(0);
    }
}

std::shared_ptr<Segment> recall(const std::string& name) {
    std::lock_guard<std::mutex> lock(mapped().mutex);
    auto it = mapped().byName.find(name);
    return it == mapped().byName.end() ? nullptr : it->second.lock();
}
}  // namespace

Mapping Mapping::create(std::string* name, std::string* err) {
    Mapping m;
    char buf[64];
    std::snprintf(buf, sizeof buf, "/hostccl-%d-%016llx", getpid(), static_cast<unsigned long long>(randomU64()));
    *name = buf;
    int fd = shm_open(buf, O_CREAT | O_EXCL | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0) {
        *err = std::string("shm_open: ") + std::strerror(errno);
        return m;
    }
    if (ftruncate(fd, sizeof(Segment)) != 0) {
        *err = std::string("ftruncate: ") + std::strerror(errno);
        close(fd);
        shm_unlink(buf);
        return m;
    }
    m.seg_ = mapFd(fd, err);
    close(fd);
    if (m.seg_ == nullptr) {
        shm_unlink(buf);
        return m;
    }
    initWords(m.seg_.get());
    remember(*name, m.seg_);
    return m;
}

// Pages are only touched as the rings use them, so a link that carries small
// messages costs a few pages, not the segment's size.
Mapping Mapping::inProcess(std::string* err) {
    Mapping m;
    void* p = mmap(nullptr, sizeof(Segment), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        *err = std::string("mmap: ") + std::strerror(errno);
        return m;
    }
    m.seg_ = std::shared_ptr<Segment>(static_cast<Segment*>(p), [](Segment* s) { munmap(s, sizeof(Segment)); });
    initWords(m.seg_.get());
    return m;
}

Mapping Mapping::open(const std::string& name, std::string* err) {
    Mapping m;
    m.seg_ = recall(name);  // the creator is a rank of this process
    if (m.seg_ != nullptr) return m;
    int fd = shm_open(name.c_str(), O_RDWR | O_CLOEXEC, 0);
    if (fd < 0) {
        *err = std::string("shm_open ") + name + ": " + std::strerror(errno);
        return m;
    }
    m.seg_ = mapFd(fd, err);
    close(fd);
    return m;
}

void Mapping::unlink(const std::string& name) { shm_unlink(name.c_str()); }

}  // namespace hostccl::transport::shm
