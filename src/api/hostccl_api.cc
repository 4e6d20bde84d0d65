// Entry points of hostccl's own extensions (include/hostccl/hostccl.h).
#include "api/validate.h"
#include "core/comm_init.h"
#include "core/launcher_env.h"
#include "hostccl/hostccl.h"

using namespace hostccl;

extern "C" {

HcclResult HostcclCommInitFromEnv(HcclComm* comm) {
    if (comm == nullptr) return fail(HCCL_E_PTR, "HostcclCommInitFromEnv: comm is NULL");
    Communicator* c = nullptr;
    CommOptions options;
    HOSTCCL_CHECK(optionsFromConfig(nullptr, &options));
    HcclResult rc = initFromLauncherEnv(options, &c);
    if (rc == HCCL_SUCCESS) *comm = c;
    return rc;
}

HcclResult HostcclGetLauncherRank(uint32_t* rank, uint32_t* size, uint32_t* localRank) {
    if (rank == nullptr || size == nullptr || localRank == nullptr)
        return fail(HCCL_E_PTR, "HostcclGetLauncherRank: NULL argument");
    LauncherInfo info;
    std::string why;
    if (!detectLauncher(&info, &why)) return HCCL_E_NOT_FOUND;
    *rank = info.rank;
    *size = info.size;
    *localRank = info.localRank;
    return HCCL_SUCCESS;
}

}  // extern "C"
