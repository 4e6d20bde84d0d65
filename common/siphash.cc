#include "common/siphash.h"

#include <sys/random.h>

#include <cstring>
#include <stdexcept>

namespace hostccl {

namespace {
inline uint64_t rotl(uint64_t x, int b) { return (x << b) | (x >> (64 - b)); }

struct State {
    uint64_t v0, v1, v2, v3;
    void round() {
        v0 += v1; v1 = rotl(v1, 13); v1 ^= v0; v0 = rotl(v0, 32);
        v2 += v3; v3 = rotl(v3, 16); v3 ^= v2;
        v0 += v3; v3 = rotl(v3, 21); v3 ^= v0;
        v2 += v1; v1 = rotl(v1, 17); v1 ^= v2; v2 = rotl(v2, 32);
    }
    void absorb(uint64_t m) {
        v3 ^= m;
        round();
        round();
        v0 ^= m;
    }
};

uint64_t load64le(const unsigned char* p) {
    uint64_t x = 0;
    for (int i = 7; i >= 0; --i) x = (x << 8) | p[i];
    return x;
}
}  // namespace

uint64_t siphash24(const Secret& key, const void* data, size_t len) {
    const auto* in = static_cast<const unsigned char*>(data);
    State s{key.k0 ^ 0x736f6d6570736575ULL, key.k1 ^ 0x646f72616e646f6dULL, key.k0 ^ 0x6c7967656e657261ULL,
            key.k1 ^ 0x7465646279746573ULL};
    size_t full = len & ~size_t{7};
    for (size_t i = 0; i < full; i += 8) s.absorb(load64le(in + i));
    uint64_t last = static_cast<uint64_t>(len & 0xff) << 56;
    for (size_t i = 0; i < (len & 7); ++i) last |= static_cast<uint64_t>(in[full + i]) << (8 * i);
    s.absorb(last);
    s.v2 ^= 0xff;
    for (int i = 0; i < 4; ++i) s.round();
    return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

static void fillRandom(void* buf, size_t len) {
    auto* p = static_cast<unsigned char*>(buf);
    while (len > 0) {
        ssize_t got = getrandom(p, len, 0);
        if (got < 0) {
            if (errno == EINTR) continue;
            throw std::runtime_error("getrandom failed");
        }
        p += got;
        len -= static_cast<size_t>(got);
    }
}

Secret randomSecret() {
    Secret s;
    fillRandom(&s, sizeof s);
    return s;
}

uint64_t randomU64() {
    uint64_t x;
    fillRandom(&x, sizeof x);
    return x;
}

}  // namespace hostccl
