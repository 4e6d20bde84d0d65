#include "core/bootstrap/peer_info.h"

#include <fmt/format.h>

namespace hostccl {

std::string whoIs(const PeerInfo& p) {
    return fmt::format("rank {} (host {} {}, pid {})", p.rank, p.hostId.substr(0, p.hostId.find('/')), p.ip, p.pid);
}

}  // namespace hostccl
