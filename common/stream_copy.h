// Copies for data this core will not read again soon (results written into a peer's
// buffer, gathered blocks): non-temporal stores skip the read-for-ownership of every
// destination line and leave the caches to the source, so a large copy moves two
// bytes of memory traffic per byte instead of three.
#pragma once

#include <cstddef>

namespace hostccl {

void streamCopy(void* dst, const void* src, size_t bytes);

// Streamed stores are weakly ordered: call this before publishing that the copies
// are done (a flag, a message), so a reader that sees the flag sees the data.
void streamCopyFence();

// The last-level cache of this machine in bytes (32 MiB when the system does not say).
size_t lastLevelCacheBytes();

}  // namespace hostccl
