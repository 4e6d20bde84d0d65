#include <unistd.h>

#include <fstream>

#include "common/env.h"
#include "core/bootstrap/peer_info.h"

namespace hostccl {

static std::string firstLine(const char* path) {
    std::ifstream in(path);
    std::string line;
    std::getline(in, line);
    return line;
}

std::string hostIdentity() {
    if (auto forced = env::raw("HOSTCCL_HOST_ID")) return *forced;
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
