#include "transports/shared_region.h"

#include <unistd.h>

#include "runtime/memory.h"

namespace hostccl::transport {

SharedRegion describeRegion(const void* p, size_t bytes) {
    SharedRegion r{};
    r.address = reinterpret_cast<uint64_t>(p);
    r.bytes = bytes;
    r.pid = static_cast<int32_t>(getpid());
    auto a = runtime::findAllocation(p);
    const char* begin = static_cast<const char*>(p);
    if (a && begin + bytes <= static_cast<const char*>(a->base) + a->size) {
        r.allocationId = a->id;
        // Offsets are into the memfd, which the peer maps whole.
        r.allocationOffset = a->fdOffset + static_cast<uint64_t>(begin - static_cast<const char*>(a->base));
        r.allocationSize = a->fdSize;
        r.fd = a->fd;
    }
    return r;
}

}  // namespace hostccl::transport
