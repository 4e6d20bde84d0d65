#include "transports/link_class.h"

#include <array>

namespace hostccl {

namespace {
#define HOSTCCL_LINK_CLASS_INFO(e, name, letter, betweenHosts, alpha, rate) LinkClassInfo{name, letter, betweenHosts, alpha, rate},
constexpr std::array<LinkClassInfo, kLinkClasses> kInfo{{HOSTCCL_LINK_CLASSES(HOSTCCL_LINK_CLASS_INFO)}};
#undef HOSTCCL_LINK_CLASS_INFO
}  // namespace

const LinkClassInfo& linkClassInfo(LinkClass c) { return kInfo[size_t(c)]; }

bool linkClassNamed(const std::string& name, LinkClass* out) {
    for (size_t c = 0; c < kLinkClasses; ++c)
        if (name == kInfo[c].name) {
            *out = LinkClass(c);
            return true;
        }
    return false;
}

}  // namespace hostccl
