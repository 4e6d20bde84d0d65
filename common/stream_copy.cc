#include "common/stream_copy.h"

#include <atomic>
#include <cstdint>
#include <cstring>

#include <unistd.h>

#if defined(__x86_64__)
#include <emmintrin.h>
#endif

namespace hostccl {

namespace {
// Below this the fence and alignment work cost more than the cache pollution saved.
constexpr size_t kStreamMinBytes = 4096;
}  // namespace

#if defined(__x86_64__)
// SSE2 is part of x86-64, so no run-time dispatch is needed.
void streamCopy(void* dst, const void* src, size_t bytes) {
    if (bytes < kStreamMinBytes) {
        std::memcpy(dst, src, bytes);
        return;
    }
    auto* d = static_cast<char*>(dst);
    auto* s = static_cast<const char*>(src);
    size_t head = (16 - (reinterpret_cast<uintptr_t>(d) & 15)) & 15;
    std::memcpy(d, s, head);
    d += head;
    s += head;
    bytes -= head;
    size_t body = bytes & ~size_t(63);
    for (size_t i = 0; i < body; i += 64) {
        __m128i x0 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i));
        __m128i x1 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 16));
        __m128i x2 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 32));
        __m128i x3 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(s + i + 48));
        _mm_stream_si128(reinterpret_cast<__m128i*>(d + i), x0);
        _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 16), x1);
        _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 32), x2);
        _mm_stream_si128(reinterpret_cast<__m128i*>(d + i + 48), x3);
    }
    std::memcpy(d + body, s + body, bytes - body);
}

void streamCopyFence() { _mm_sfence(); }
#else
void streamCopy(void* dst, const void* src, size_t bytes) { std::memcpy(dst, src, bytes); }
void streamCopyFence() { std::atomic_thread_fence(std::memory_order_seq_cst); }
#endif

size_t lastLevelCacheBytes() {
    for (int name : {_SC_LEVEL3_CACHE_SIZE, _SC_LEVEL2_CACHE_SIZE}) {
        const long v = sysconf(name);
        if (v > 0) return static_cast<size_t>(v);
    }
    return size_t(32) << 20;
}

}  // namespace hostccl
