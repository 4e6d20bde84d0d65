#include "core/bootstrap/root_info.h"

#include <arpa/inet.h>

#include <cstring>

namespace hostccl {

namespace {
constexpr size_t kIpBytes = 64;
constexpr uint32_t kMagic = 0x484f5354;  // "HOST"
constexpr uint32_t kRootInfoVersion = 1;

// Layout after the IP string; fixed-width fields, host byte order (all ranks of
// one job share an architecture).
struct Body {
    uint32_t magic;
    uint32_t version;
    uint16_t port;
    uint16_t reserved;
    uint32_t reserved2;
    uint64_t k0, k1;
    uint64_t bootstrapId;
    char identifier[128];
};
static_assert(kIpBytes + sizeof(Body) <= HCCL_ROOT_INFO_BYTES, "root info fits");
}  // namespace

void encodeRootInfo(const RootInfo& info, HcclRootInfo* out) {
    std::memset(out->internal, 0, sizeof out->internal);
    std::strncpy(out->internal, info.ip.c_str(), kIpBytes - 1);
    Body b{};
    b.magic = kMagic;
    b.version = kRootInfoVersion;
    b.port = info.port;
    b.k0 = info.secret.k0;
    b.k1 = info.secret.k1;
    b.bootstrapId = info.bootstrapId;
    std::snprintf(b.identifier, sizeof b.identifier, "hostccl-%016llx",
                  static_cast<unsigned long long>(info.bootstrapId));
    std::memcpy(out->internal + kIpBytes, &b, sizeof b);
}

bool decodeRootInfo(const HcclRootInfo* in, RootInfo* out, std::string* why) {
    const char* ip = in->internal;
    if (std::memchr(ip, '\0', kIpBytes) == nullptr) {
        *why = "IP field is not NUL-terminated";
        return false;
    }
    in_addr addr{};
    if (inet_pton(AF_INET, ip, &addr) != 1) {
        *why = std::string("IP field '") + std::string(ip, strnlen(ip, 32)) + "' is not an IPv4 address";
        return false;
    }
    Body b;
    std::memcpy(&b, in->internal + kIpBytes, sizeof b);
    if (b.magic != kMagic || b.version != kRootInfoVersion) {
        *why = "not produced by HcclGetRootInfo of this library (bad magic or version)";
        return false;
    }
    if (b.port == 0) {
        *why = "port is 0";
        return false;
    }
    out->ip = ip;
    out->port = b.port;
    out->secret = Secret{b.k0, b.k1};
    out->bootstrapId = b.bootstrapId;
    return true;
}

}  // namespace hostccl
