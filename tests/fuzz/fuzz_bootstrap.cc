// libFuzzer target: what a listener reads from a connection before and after the
// secret check: the Hello, a rendezvous entry and status, and a whitelist file.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/bootstrap/rendezvous_wire.h"
#include "core/net/handshake.h"
#include "core/net/whitelist.h"
#include "tests/fuzz/fuzz_quiet.h"

namespace {
// Takes the next sizeof(T) bytes (zero-padded) off the input.
template <typename T>
T take(const uint8_t*& data, size_t& size) {
    T v;
    std::memset(&v, 0, sizeof v);
    size_t n = std::min(size, sizeof v);
    std::memcpy(&v, data, n);
    data += n;
    size -= n;
    return v;
}
}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace hostccl;
    std::string why;
    auto hello = take<net::Hello>(data, size);
    net::checkHello(hello, &why);
    auto entry = take<bootstrap::WireEntry>(data, size);
    if (bootstrap::checkEntry(entry, &why)) {
        PeerInfo p = bootstrap::fromWire(entry);
        if (p.rank >= entry.nRanks || p.ip.size() >= sizeof entry.ip) __builtin_trap();
    }
    auto status = take<bootstrap::WireStatus>(data, size);
    bootstrap::statusCode(status);
    bootstrap::statusReason(status);
    std::vector<std::string> ips;
    net::parseWhitelist(std::string(reinterpret_cast<const char*>(data), size), &ips, &why);
    return 0;
}
