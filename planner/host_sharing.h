// What ranks sharing a host cost each other beyond sharing its cores, as the
// crowded-host probe measures it (planner/crowding_probe.h: sgemm thread ranks or a
// launcher's processes) or as the model file carries it (hostccl.planner's probe with
// the model's own processes and training step: model_spec.h).
#pragma once

#include <cstdint>

namespace hostccl::plan {

struct HostSharing {
    double computeSlowdown = 1;  // >= 1: CPU time of a rank's compute with the host's ranks computing over alone
    double syncBase = 0;         // seconds one allreduce of kSyncProbeBytes costs between compute phases, op included,
    double syncPerCompute = 0;   // plus this many seconds per second of compute (on an idle core) since the last one
    double syncShortCompute = 0; // the short interval's compute on an idle core, seconds (the fixed part's measure)
    double syncFloor = 0;        // seconds one such allreduce costs with no compute since the last, op included
    double handoff = 0;          // seconds a pipeline adds per hand-off while filling or draining
};

// The message of the probes' collectives (their op's own time is taken out of syncBase
// and syncFloor by the planner).
constexpr uint64_t kSyncProbeBytes = 64 << 10;

}  // namespace hostccl::plan
