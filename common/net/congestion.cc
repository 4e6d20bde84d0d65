#include "common/net/congestion.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>
#include <mutex>

#include "common/env.h"
#include "common/log.h"

namespace hostccl::net {

namespace {
constexpr const char* kInsteadOfBbr = "cubic";
}  // namespace

const std::string& congestionPolicy() {
    static const std::string policy = env::getString("HOSTCCL_TCP_CONGESTION");  // unset or empty: the registry's "auto"
    return policy;
}

std::string congestionControlOf(int fd) {
    char name[32] = {};  // the kernel's names are at most 15 characters
    socklen_t len = sizeof name - 1;
    if (::getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, &len) != 0) return "";
    return std::string(name, strnlen(name, len));
}

bool applyCongestionPolicy(int fd, const std::string& policy, std::string* why) {
    if (policy == "system") return true;
    std::string want = policy;
    if (policy == "auto") {
        if (congestionControlOf(fd).rfind("bbr", 0) != 0) return true;  // bbr, bbr2, bbr3
        want = kInsteadOfBbr;
    }
    if (::setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, want.data(), socklen_t(want.size())) == 0) return true;
    *why = "congestion control \"" + want + "\" not available (" + std::strerror(errno) +
           "; see net.ipv4.tcp_allowed_congestion_control): the socket keeps \"" + congestionControlOf(fd) + "\"";
    return false;
}

void applyCongestionPolicy(int fd) {
    std::string why;
    if (applyCongestionPolicy(fd, congestionPolicy(), &why)) return;
    static std::once_flag warned;  // every socket would say the same
    std::call_once(warned, [&] { log::warn("HOSTCCL_TCP_CONGESTION={}: {}", congestionPolicy(), why); });
}

}  // namespace hostccl::net
