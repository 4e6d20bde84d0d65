// Whether another process of this machine still runs.
#pragma once

#include <sys/types.h>

namespace hostccl {

// No process `pid` runs any more: none exists, or it is a zombie its parent has not
// reaped yet (kill(pid, 0) still finds those, so it alone cannot tell).
bool processEnded(pid_t pid);

}  // namespace hostccl
