#include "transports/rdma/gid_select.h"

#include <arpa/inet.h>
#include <dirent.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>

#include <fmt/format.h>

namespace hostccl::transport::rdma {
namespace {

bool isZero(const Gid& g) {
    return std::all_of(g.begin(), g.end(), [](uint8_t b) { return b == 0; });
}

bool isIpv4Mapped(const Gid& g) {
    return std::all_of(g.begin(), g.begin() + 10, [](uint8_t b) { return b == 0; }) && g[10] == 0xff && g[11] == 0xff;
}

std::string firstLine(const std::string& path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
}

}  // namespace

bool parseGid(const std::string& text, Gid* out) {
    unsigned groups[8];
    int used = 0;
    if (std::sscanf(text.c_str(), "%4x:%4x:%4x:%4x:%4x:%4x:%4x:%4x%n", &groups[0], &groups[1], &groups[2], &groups[3],
                    &groups[4], &groups[5], &groups[6], &groups[7], &used) != 8 ||
        size_t(used) != text.size())
        return false;
    for (int i = 0; i < 8; ++i) {
        (*out)[2 * i] = uint8_t(groups[i] >> 8);
        (*out)[2 * i + 1] = uint8_t(groups[i]);
    }
    return true;
}

std::string formatGid(const Gid& g) {
    std::string s;
    for (int i = 0; i < 8; ++i) s += fmt::format("{}{:02x}{:02x}", i ? ":" : "", g[2 * i], g[2 * i + 1]);
    return s;
}

bool ipv4MappedGid(const std::string& ipv4, Gid* out) {
    in_addr a{};
    if (::inet_pton(AF_INET, ipv4.c_str(), &a) != 1) return false;
    out->fill(0);
    (*out)[10] = (*out)[11] = 0xff;
    std::memcpy(out->data() + 12, &a.s_addr, 4);  // network order, as the GID holds it
    return true;
}

GidChoice chooseGid(const std::vector<GidEntry>& table, const std::string& localIp, int overrideIndex) {
    GidChoice c;
    if (overrideIndex >= 0) {
        for (const GidEntry& e : table)
            if (e.index == overrideIndex && !isZero(e.gid)) {
                c.index = e.index;
                c.why = fmt::format("GID index {} ({}, {}) from HOSTCCL_RDMA_GID_INDEX", e.index, formatGid(e.gid), e.type);
                return c;
            }
        c.why = fmt::format("HOSTCCL_RDMA_GID_INDEX={} names no populated GID of the port", overrideIndex);
        return c;
    }
    Gid wanted{};
    const bool haveIp = ipv4MappedGid(localIp, &wanted);
    const GidEntry* fallback = nullptr;
    for (const GidEntry& e : table) {
        if (e.type != "RoCE v2" || !isIpv4Mapped(e.gid)) continue;
        if (haveIp && e.gid == wanted) {
            c.index = e.index;
            c.why = fmt::format("GID index {} ({}): RoCE v2, mapped from {} on {}", e.index, formatGid(e.gid), localIp,
                                e.netdev.empty() ? "?" : e.netdev);
            return c;
        }
        if (fallback == nullptr) fallback = &e;
    }
    if (fallback != nullptr) {
        c.index = fallback->index;
        c.why = fmt::format("GID index {} ({}): the first IPv4-mapped RoCE v2 GID; none is mapped from {}",
                            fallback->index, formatGid(fallback->gid), localIp);
        return c;
    }
    c.why = fmt::format("no IPv4-mapped RoCE v2 GID on the port ({} populated entries); set HOSTCCL_RDMA_GID_INDEX",
                        table.size());
    return c;
}

std::vector<GidEntry> readGidTable(const std::string& portDir) {
    std::vector<GidEntry> table;
    DIR* dir = ::opendir((portDir + "/gids").c_str());
    if (dir == nullptr) return table;
    while (dirent* d = ::readdir(dir)) {
        char* end = nullptr;
        long index = std::strtol(d->d_name, &end, 10);
        if (end == d->d_name || *end != '\0') continue;
        GidEntry e;
        e.index = int(index);
        if (!parseGid(firstLine(portDir + "/gids/" + d->d_name), &e.gid) || isZero(e.gid)) continue;
        e.type = firstLine(portDir + "/gid_attrs/types/" + d->d_name);
        e.netdev = firstLine(portDir + "/gid_attrs/ndevs/" + d->d_name);
        table.push_back(std::move(e));
    }
    ::closedir(dir);
    std::sort(table.begin(), table.end(), [](const GidEntry& a, const GidEntry& b) { return a.index < b.index; });
    return table;
}

}  // namespace hostccl::transport::rdma
