// Entry points of hostccl's own extensions (include/hostccl/hostccl.h).
#include <algorithm>
#include <cstring>

#include "api/validate.h"
#include "core/comm_init.h"
#include "core/launcher_env.h"
#include "core/topology/describe.h"
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

HcclResult HostcclCommDescribe(HcclComm comm, char* text, uint64_t capacity) {
    const char* fn = "HostcclCommDescribe";
    Communicator* c = nullptr;
    HOSTCCL_CHECK(api::checkLive(comm, fn, &c));
    if (text == nullptr) return fail(HCCL_E_PTR, "{}: text is NULL", fn);
    if (capacity == 0) return fail(HCCL_E_PARA, "{}: capacity is 0", fn);
    std::string d = describeCommunicator(*c);
    size_t n = std::min<size_t>(d.size(), capacity - 1);
    std::memcpy(text, d.data(), n);
    text[n] = '\0';
    return HCCL_SUCCESS;
}

}  // extern "C"
