#include <unistd.h>

#include <fstream>
#include <vector>

#include "common/env.h"
#include "core/bootstrap/peer_info.h"
#include "runtime/device.h"

namespace hostccl {

static std::string firstLine(const char* path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
}

// HOSTCCL_HOST_ID="a,a,b,b": entry d for the rank on device d, so ranks that are
// threads of one process can emulate several hosts too.
static std::string forcedFor(const std::string& forced) {
    if (forced.find(',') == std::string::npos) return forced;
    std::vector<std::string> ids;
    size_t start = 0;
    for (size_t i = 0; i <= forced.size(); ++i)
        if (i == forced.size() || forced[i] == ',') {
            ids.push_back(forced.substr(start, i - start));
            start = i + 1;
        }
    return ids[static_cast<size_t>(runtime::currentDeviceOr(0)) % ids.size()];
}

std::string machineOf(const std::string& hostId) {
    const size_t first = hostId.find('/');
    const size_t last = hostId.rfind('/');
    return first != std::string::npos && last != first ? hostId.substr(first + 1, last - first - 1) : hostId;
}

std::string hostIdentity() {
    if (auto forced = env::raw("HOSTCCL_HOST_ID")) return forcedFor(*forced);
    char name[256] = {0};
    gethostname(name, sizeof name - 1);
    // The network namespace is part of the identity: ranks in different namespaces
    // are different "hosts" even on one kernel, which is how tests emulate a cluster.
    char ns[128] = {0};
    ssize_t n = readlink("/proc/self/ns/net", ns, sizeof ns - 1);
    return std::string(name) + "/" + firstLine("/proc/sys/kernel/random/boot_id") + "/" +
           (n > 0 ? std::string(ns, static_cast<size_t>(n)) : std::string("?"));
}

}  // namespace hostccl
