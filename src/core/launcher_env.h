// Rank, size and meeting point from a launcher's environment, so mpirun (Open
// MPI), MPICH's hydra, srun and torchrun start hostccl jobs without wrappers.
// The meeting point is HOSTCCL_ROOT_ADDR ("host:port"), else torchrun's
// MASTER_ADDR / MASTER_PORT, else under srun the step's first node
// (core/slurm_meeting_point.h); rank 0 serves the rendezvous there.
#pragma once

#include <cstdint>
#include <string>

namespace hostccl {

struct LauncherInfo {
    std::string launcher;  // "openmpi", "mpich", "slurm", "torchrun"
    uint32_t rank = 0;
    uint32_t size = 0;
    uint32_t localRank = 0;
    std::string rootHost;
    uint16_t rootPort = 0;
    bool rootDerived = false;  // from Slurm's step variables, not set by the user
    std::string jobKey;  // mixed into the job secret: HOSTCCL_JOB_SECRET or the launcher's job id
};

// Rank, size, local rank and job key (no meeting point). False with `why` when no
// launcher is recognised or its values are unusable.
bool detectLauncherRank(LauncherInfo* out, std::string* why);
// All of it, the meeting point too: false with `why` also when there is none.
bool detectLauncher(LauncherInfo* out, std::string* why);

}  // namespace hostccl
