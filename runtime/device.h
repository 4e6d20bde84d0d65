// Logical devices. A thread's current device is set by aclrtSetDevice; the count
// is HOSTCCL_DEVICE_COUNT so programs that spawn one rank per device know how many.
#pragma once

#include <cstdint>

namespace hostccl::runtime {

uint32_t deviceCount();
bool deviceValid(int32_t device);
void setCurrentDevice(int32_t device);
int32_t currentDevice();  // -1 when none was set on this thread
int32_t currentDeviceOr(int32_t fallback);

}  // namespace hostccl::runtime
