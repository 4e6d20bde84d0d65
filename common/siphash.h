// SipHash-2-4 (Aumasson & Bernstein): a keyed 64-bit MAC. Peers prove they hold
// the job secret by MACing a fresh challenge, so the secret never crosses the wire.
#pragma once

#include <cstddef>
#include <cstdint>

namespace hostccl {

struct Secret {
    uint64_t k0 = 0, k1 = 0;
    bool operator==(const Secret& o) const { return k0 == o.k0 && k1 == o.k1; }
};

uint64_t siphash24(const Secret& key, const void* data, size_t len);

// 128 bits from the kernel's CSPRNG (getrandom).
Secret randomSecret();
uint64_t randomU64();

}  // namespace hostccl
