#include "core/bootstrap/rendezvous_wire.h"

#include <arpa/inet.h>

#include <cstring>

#include "common/log.h"

namespace hostccl::bootstrap {

namespace {
template <size_t N>
bool terminated(const char (&s)[N]) {
    return std::memchr(s, '\0', N) != nullptr;
}
}  // namespace

namespace {
// The place value of the lowest nonzero base-kTreeRadix digit of `rank` (> 0).
uint64_t lowestPlace(uint32_t rank) {
    uint64_t place = 1;
    while ((rank / place) % kTreeRadix == 0) place *= kTreeRadix;
    return place;
}
}  // namespace

uint32_t treeParent(uint32_t rank) {
    const uint64_t place = lowestPlace(rank);
    return static_cast<uint32_t>(rank - (rank / place) % kTreeRadix * place);
}

std::vector<uint32_t> treeChildren(uint32_t rank, uint32_t n) {
    uint64_t span = 1;  // the root's: the least power of the radix >= n
    if (rank == 0)
        while (span < n) span *= kTreeRadix;
    else
        span = lowestPlace(rank);
    std::vector<uint32_t> out;
    for (uint64_t c = span / kTreeRadix; c >= 1; c /= kTreeRadix)
        for (uint64_t j = 1; j < kTreeRadix; ++j)
            if (rank + j * c < n) out.push_back(static_cast<uint32_t>(rank + j * c));
    return out;
}

WireEntry toWire(const PeerInfo& p, uint32_t nRanks) {
    WireEntry w{};
    w.rank = p.rank;
    w.nRanks = nRanks;
    std::strncpy(w.ip, p.ip.c_str(), sizeof w.ip - 1);
    w.port = p.port;
    w.metricsPort = p.metricsPort;
    w.device = p.device;
    w.pid = p.pid;
    w.hostCores = p.hostCores;
    w.hostNumaNodes = p.hostNumaNodes;
    std::strncpy(w.hostId, p.hostId.c_str(), sizeof w.hostId - 1);
    return w;
}

bool checkEntry(const WireEntry& w, std::string* why) {
    in_addr addr{};
    if (w.nRanks == 0 || w.nRanks > kMaxRanks)
        *why = fmt::format("nRanks {} is not in [1, {}]", w.nRanks, kMaxRanks);
    else if (w.rank >= w.nRanks)
        *why = fmt::format("rank {} is not below nRanks {}", w.rank, w.nRanks);
    else if (!terminated(w.ip) || !terminated(w.hostId))
        *why = "unterminated address or host id";
    else if (inet_pton(AF_INET, w.ip, &addr) != 1 || w.port == 0)
        *why = "no IPv4 address and port to reach the rank";
    else
        return true;
    return false;
}

PeerInfo fromWire(const WireEntry& w) {
    PeerInfo p;
    p.rank = w.rank;
    p.ip = std::string(w.ip, strnlen(w.ip, sizeof w.ip));
    p.port = w.port;
    p.metricsPort = w.metricsPort;
    p.device = w.device;
    p.pid = w.pid;
    p.hostCores = w.hostCores;
    p.hostNumaNodes = w.hostNumaNodes;
    p.hostId = std::string(w.hostId, strnlen(w.hostId, sizeof w.hostId));
    return p;
}

WireStatus status(HcclResult code, const std::string& reason) {
    WireStatus s{};
    s.code = code;
    std::strncpy(s.reason, reason.c_str(), sizeof s.reason - 1);
    return s;
}

HcclResult statusCode(const WireStatus& s) {
    return s.code < HCCL_E_RESERVED ? static_cast<HcclResult>(s.code) : HCCL_E_INTERNAL;
}

std::string statusReason(const WireStatus& s) { return std::string(s.reason, strnlen(s.reason, sizeof s.reason)); }

}  // namespace hostccl::bootstrap
