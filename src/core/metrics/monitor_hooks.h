// How the core reaches the process's live monitor (monitor/, the layer above it)
// without including it: the monitor installs its start and its endpoint's port
// here (monitor::install, which the API's init entry points pull in, so that a
// static link of libhccl keeps it too). Without it communicators still measure
// when HOSTCCL_MONITOR is on, but no monitor thread or endpoint runs.
#pragma once

#include <cstdint>

namespace hostccl::monitor {

// HOSTCCL_MONITOR: whether communicators measure at all.
bool enabled();

struct Hooks {
    void (*ensureStarted)();    // the thread and endpoint, once per process
    uint16_t (*endpointPort)();  // 0 when there is none
};
void installHooks(const Hooks& hooks);

// Through the installed hooks: nothing, and port 0, when none are installed or
// monitoring is off.
void ensureStarted();
uint16_t endpointPort();

}  // namespace hostccl::monitor
