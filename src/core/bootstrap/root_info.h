// The 4108-byte HcclRootInfo blob. Like HCCL's, it starts with the root's IP as a
// NUL-terminated string (tools such as HCCL Test read it there); then a magic, the
// rendezvous port, the 128-bit job secret and the bootstrap id.
#pragma once

#include <cstdint>
#include <string>

#include "common/siphash.h"
#include "hccl/hccl_types.h"

namespace hostccl {

struct RootInfo {
    std::string ip;
    uint16_t port = 0;
    Secret secret;
    uint64_t bootstrapId = 0;
};

void encodeRootInfo(const RootInfo& info, HcclRootInfo* out);
// Rejects blobs that did not come from encodeRootInfo (bad magic, unterminated or
// invalid IP, port 0); `why` says which check failed.
bool decodeRootInfo(const HcclRootInfo* in, RootInfo* out, std::string* why);

}  // namespace hostccl
