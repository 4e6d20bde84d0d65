#include "core/topology/machine.h"

#include <hwloc.h>

#include <thread>

#include "common/log.h"

namespace hostccl {

namespace {
MachineShape probe() {
    MachineShape shape;
    shape.cores = std::max(1u, std::thread::hardware_concurrency());
    hwloc_topology_t topo;
    if (hwloc_topology_init(&topo) != 0) return shape;
    if (hwloc_topology_load(topo) == 0) {
        int cores = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_CORE);
        int numa = hwloc_get_nbobjs_by_type(topo, HWLOC_OBJ_NUMANODE);
        if (cores > 0) shape.cores = static_cast<uint32_t>(cores);
        if (numa > 0) shape.numaNodes = static_cast<uint32_t>(numa);
    } else {
        log::warn("hwloc could not read this machine's topology; assuming {} cores, 1 NUMA node", shape.cores);
    }
    hwloc_topology_destroy(topo);
    return shape;
}
}  // namespace

const MachineShape& thisMachine() {
    static const MachineShape shape = probe();
    return shape;
}

}  // namespace hostccl
