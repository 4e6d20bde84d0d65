// This machine's shape as hwloc sees it (physical cores, NUMA nodes), read once per
// process. Ranks exchange it at bootstrap, so every rank knows every host's shape.
#pragma once

#include <cstdint>

namespace hostccl {

struct MachineShape {
    uint32_t cores = 1;      // physical cores of the machine
    uint32_t numaNodes = 1;
};

const MachineShape& thisMachine();

}  // namespace hostccl
