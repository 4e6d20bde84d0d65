// Which GID of a RoCE port names this rank. RoCEv2 routes over IP, so the right
// entry is the IPv4-mapped GID (::ffff:a.b.c.d) of the address the ranks reach each
// other on, of type "RoCE v2"; link-local (fe80::) entries cannot be routed (on lo
// they fail at RTR). HOSTCCL_RDMA_GID_INDEX overrides the choice.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

namespace hostccl::transport::rdma {

using Gid = std::array<uint8_t, 16>;

struct GidEntry {
    int index = -1;
    Gid gid{};
    std::string type;    // sysfs gid_attrs/types: "RoCE v2", "IB/RoCE v1"
    std::string netdev;  // sysfs gid_attrs/ndevs
};

struct GidChoice {
    int index = -1;  // -1: none usable
    std::string why; // what was chosen and why, or why nothing was
};

// "fe80:0000:...:0001" (8 groups of 4 hex digits, as sysfs prints them).
bool parseGid(const std::string& text, Gid* out);
std::string formatGid(const Gid& gid);
// The IPv4-mapped GID of a dotted quad; false when `ipv4` is not one.
bool ipv4MappedGid(const std::string& ipv4, Gid* out);

// `overrideIndex` >= 0 must name a non-zero entry of the table. Otherwise: the RoCE v2
// entry mapped from `localIp`, else the first IPv4-mapped RoCE v2 entry (with a
// reason saying the address was not found).
GidChoice chooseGid(const std::vector<GidEntry>& table, const std::string& localIp, int overrideIndex);

// The non-zero entries of a port's GID table: `portDir` is
// /sys/class/infiniband/<device>/ports/<port>.
std::vector<GidEntry> readGidTable(const std::string& portDir);

}  // namespace hostccl::transport::rdma
