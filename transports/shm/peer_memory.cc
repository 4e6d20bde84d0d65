#include "transports/shm/peer_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace hostccl::transport::shm {

PeerMemory::~PeerMemory() {
    for (const Mapping& m : mappings_) munmap(m.base, m.size);
}

char* PeerMemory::resolve(const SharedRegion& d, std::string* why) {
    if (!mappableByOtherProcesses(d)) {
        *why = "the peer's buffer is not aclrtMalloc memory, which another process cannot map";
        return nullptr;
    }
    if (d.allocationOffset > d.allocationSize || d.bytes > d.allocationSize - d.allocationOffset) {
        *why = "peer described bytes outside its allocation";
        return nullptr;
    }
    for (size_t i = 0; i < mappings_.size(); ++i) {
        if (mappings_[i].id != d.allocationId) continue;
        Mapping hit = mappings_[i];
        mappings_.erase(mappings_.begin() + long(i));
        mappings_.insert(mappings_.begin(), hit);
        return static_cast<char*>(hit.base) + d.allocationOffset;
    }
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%d/fd/%d", d.pid, d.fd);
    int fd = ::open(path, O_RDWR | O_CLOEXEC);
    if (fd < 0) {
        *why = std::string("cannot open the peer's memory (") + path + "): " + std::strerror(errno);
        return nullptr;
    }
    void* base = mmap(nullptr, d.allocationSize, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
    ::close(fd);
    if (base == MAP_FAILED) {
        *why = std::string("cannot map the peer's memory: ") + std::strerror(errno);
        return nullptr;
    }
    if (mappings_.size() == kMaxMappings) {
        munmap(mappings_.back().base, mappings_.back().size);
        mappings_.pop_back();
    }
    mappings_.insert(mappings_.begin(), Mapping{d.allocationId, base, d.allocationSize});
    return static_cast<char*>(base) + d.allocationOffset;
}

}  // namespace hostccl::transport::shm
