#include "runtime/device.h"

#include "common/env.h"
#include "common/fast_tls.h"

namespace hostccl::runtime {

namespace {
HOSTCCL_FAST_TLS thread_local int32_t tCurrentDevice = -1;
}

uint32_t deviceCount() {
    static const uint32_t count = static_cast<uint32_t>(env::getInt("HOSTCCL_DEVICE_COUNT", 1, 4096));
    return count;
}

bool deviceValid(int32_t device) { return device >= 0 && static_cast<uint32_t>(device) < deviceCount(); }
void setCurrentDevice(int32_t device) { tCurrentDevice = device; }
int32_t currentDevice() { return tCurrentDevice; }
int32_t currentDeviceOr(int32_t fallback) { return tCurrentDevice >= 0 ? tCurrentDevice : fallback; }

}  // namespace hostccl::runtime
