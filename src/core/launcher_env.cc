#include "core/launcher_env.h"

#include <cstdlib>

#include "common/env.h"
#include "core/slurm_meeting_point.h"

namespace hostccl {

namespace {

struct Scheme {
    const char* name;
    const char* rank;
    const char* size;
    const char* localRank;
    const char* jobId;  // may be nullptr
};

// Checked in order: the first scheme whose rank and size are both set wins.
constexpr Scheme kSchemes[] = {
    {"openmpi", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_RANK", "OMPI_MCA_ess_base_jobid"},
    {"mpich", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "PMI_ID"},
    {"slurm", "SLURM_PROCID", "SLURM_NTASKS", "SLURM_LOCALID", "SLURM_JOB_ID"},
    {"torchrun", "RANK", "WORLD_SIZE", "LOCAL_RANK", "TORCHELASTIC_RUN_ID"},
};

bool parseU32(const std::string& s, uint32_t* out) {
    if (s.empty() || s.size() > 9 || s.find_first_not_of("0123456789") != std::string::npos) return false;
    *out = static_cast<uint32_t>(std::stoul(s));
    return true;
}

bool rootAddress(LauncherInfo* info, std::string* why) {
    std::string host, port;
    const bool fromSlurm = info->launcher == "slurm" && !env::raw("HOSTCCL_ROOT_ADDR") && !env::raw("MASTER_ADDR");
    if (fromSlurm) {
        if (!slurmMeetingPoint(&info->rootHost, &info->rootPort, why)) return false;
        info->rootDerived = true;
        // Rank 0 serves where the others look: on the step's first node, where Slurm's
        // block and cyclic distributions put task 0 (an arbitrary one may not).
        const std::string node = env::getString("SLURMD_NODENAME");
        if (info->rank == 0 && !node.empty() && node != info->rootHost) {
            *why = "no meeting point: rank 0 runs on " + node + ", not on the step's first node " + info->rootHost +
                   " (task distribution?); set HOSTCCL_ROOT_ADDR=host:port";
            return false;
        }
        return true;
    }
    if (auto addr = env::raw("HOSTCCL_ROOT_ADDR")) {
        size_t colon = addr->rfind(':');
        if (colon == std::string::npos) {
            *why = "HOSTCCL_ROOT_ADDR='" + *addr + "' is not host:port";
            return false;
        }
        host = addr->substr(0, colon);
        port = addr->substr(colon + 1);
    } else {
        host = env::getString("MASTER_ADDR");
        port = env::getString("MASTER_PORT");
    }
    uint32_t p = 0;
    if (host.empty() || !parseU32(port, &p) || p == 0 || p > 65535) {
        *why = "no meeting point: set HOSTCCL_ROOT_ADDR=host:port (or MASTER_ADDR and MASTER_PORT)";
        return false;
    }
    // torchrun's agent serves its own store on MASTER_PORT (TORCHELASTIC_USE_AGENT_STORE):
    // the job meets on the next port.
    if (!env::raw("HOSTCCL_ROOT_ADDR") && env::getString("TORCHELASTIC_USE_AGENT_STORE") == "True") {
        if (p == 65535) {
            *why = "no meeting point: MASTER_PORT 65535 is torchrun's store and has no next port; set HOSTCCL_ROOT_ADDR";
            return false;
        }
        ++p;
    }
    info->rootHost = host;
    info->rootPort = static_cast<uint16_t>(p);
    return true;
}

}  // namespace

bool detectLauncherRank(LauncherInfo* out, std::string* why) {
    for (const Scheme& s : kSchemes) {
        auto rank = env::raw(s.rank), size = env::raw(s.size);
        if (!rank || !size) continue;
        LauncherInfo info;
        info.launcher = s.name;
        if (!parseU32(*rank, &info.rank) || !parseU32(*size, &info.size) || info.size == 0 || info.rank >= info.size) {
            *why = std::string(s.rank) + "='" + *rank + "' / " + s.size + "='" + *size + "' are not a rank below a size";
            return false;
        }
        if (auto local = env::raw(s.localRank)) parseU32(*local, &info.localRank);
        info.jobKey = env::raw("HOSTCCL_JOB_SECRET").value_or(s.jobId ? env::getString(s.jobId) : "");
        *out = info;
        return true;
    }
    *why = "no launcher environment found (Open MPI, MPICH/hydra, Slurm or torchrun variables)";
    return false;
}

bool detectLauncher(LauncherInfo* out, std::string* why) {
    LauncherInfo info;
    if (!detectLauncherRank(&info, why) || !rootAddress(&info, why)) return false;
    *out = info;
    return true;
}

}  // namespace hostccl
