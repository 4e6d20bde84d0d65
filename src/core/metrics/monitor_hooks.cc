#include "core/metrics/monitor_hooks.h"

#include <atomic>

#include "common/env.h"

namespace hostccl::monitor {

namespace {
std::atomic<void (*)()> gEnsureStarted{nullptr};
std::atomic<uint16_t (*)()> gEndpointPort{nullptr};
}  // namespace

bool enabled() {
    static const bool on = env::getBool("HOSTCCL_MONITOR");
    return on;
}

void installHooks(const Hooks& hooks) {
    gEnsureStarted.store(hooks.ensureStarted);
    gEndpointPort.store(hooks.endpointPort);
}

void ensureStarted() {
    if (auto start = gEnsureStarted.load(); start != nullptr && enabled()) start();
}

uint16_t endpointPort() {
    auto port = gEndpointPort.load();
    return port != nullptr ? port() : 0;
}

}  // namespace hostccl::monitor
