// An enum field of a caller's struct as the integer it holds. A C caller may store
// any value in it; loading it as the enum type would be undefined (UBSan rejects it),
// so the C entry points read such fields through this before checking them.
#pragma once

#include <cstdint>
#include <cstring>

namespace hostccl {

template <typename E>
int32_t rawEnum(const E& field) {
    static_assert(sizeof(E) == sizeof(int32_t), "HCCL and ACL enums are int-sized");
    int32_t v;
    std::memcpy(&v, &field, sizeof v);
    return v;
}

}  // namespace hostccl
