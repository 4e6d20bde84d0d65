// Communicator management entry points of the HCCL C API.
#include <cstring>
#include <set>

#include "api/validate.h"
#include "common/datatype.h"
#include "core/comm_init.h"
#include "hccl/hccl.h"
#include "monitor/monitor.h"
#include "runtime/device.h"

using namespace hostccl;
using hostccl::api::checkComm;

namespace {
// The live monitor reaches the core through hooks only; naming it here pulls it
// into every link of these entry points, libhccl.a's included.
[[maybe_unused]] const bool kMonitorInstalled = monitor::install();

constexpr size_t kMaxPathBytes = 4096;  // including the NUL, as HCCL documents

// Runs an init path and publishes the handle only when it succeeded.
template <typename Init>
HcclResult publish(HcclComm* comm, Init&& init) {
    Comm* c = nullptr;
    HcclResult rc = init(&c);
    if (rc == HCCL_SUCCESS) *comm = c;
    return rc;
}
}  // namespace

extern "C" {

uint32_t HcclGetCommConfigCapability(void) { return HCCL_COMM_CONFIG_RESERVED; }

const char* HcclGetErrorString(HcclResult code) { return resultText(code); }

HcclResult HcclGetRootInfo(HcclRootInfo* rootInfo) {
    if (rootInfo == nullptr) return fail(HCCL_E_PTR, "HcclGetRootInfo: rootInfo is NULL");
    return makeRootInfo(rootInfo);
}

HcclResult HcclCommInitRootInfoConfig(uint32_t nRanks, const HcclRootInfo* rootInfo, uint32_t rank,
                                      const HcclCommConfig* config, HcclComm* comm) {
    const char* fn = "HcclCommInitRootInfo";
    if (rootInfo == nullptr || comm == nullptr) return fail(HCCL_E_PTR, "{}: rootInfo or comm is NULL", fn);
    if (nRanks == 0) return fail(HCCL_E_PARA, "{}: nRanks is 0", fn);
    if (rank >= nRanks) return fail(HCCL_E_PARA, "{}: rank {} is not below nRanks {}", fn, rank, nRanks);
    CommSettings options;
    HOSTCCL_CHECK(optionsFromConfig(config, &options));
    if (log::entryLogEnabled()) log::info("{}(nRanks={}, rank={})", fn, nRanks, rank);
    return publish(comm, [&](Comm** c) { return initFromRootInfo(nRanks, rootInfo, rank, options, c); });
}

HcclResult HcclCommInitRootInfo(uint32_t nRanks, const HcclRootInfo* rootInfo, uint32_t rank, HcclComm* comm) {
    return HcclCommInitRootInfoConfig(nRanks, rootInfo, rank, nullptr, comm);
}

HcclResult HcclCommInitClusterInfoConfig(const char* clusterInfo, uint32_t rank, HcclCommConfig* config,
                                         HcclComm* comm) {
    const char* fn = "HcclCommInitClusterInfo";
    if (clusterInfo == nullptr || comm == nullptr) return fail(HCCL_E_PTR, "{}: clusterInfo or comm is NULL", fn);
    if (strnlen(clusterInfo, kMaxPathBytes) >= kMaxPathBytes)
        return fail(HCCL_E_PARA, "{}: rank table path is longer than {} bytes", fn, kMaxPathBytes - 1);
    CommSettings options;
    HOSTCCL_CHECK(optionsFromConfig(config, &options));
    if (log::entryLogEnabled()) log::info("{}(path={}, rank={})", fn, clusterInfo, rank);
    return publish(comm, [&](Comm** c) { return initFromRankTable(clusterInfo, rank, options, c); });
}

HcclResult HcclCommInitClusterInfo(const char* clusterInfo, uint32_t rank, HcclComm* comm) {
    return HcclCommInitClusterInfoConfig(clusterInfo, rank, nullptr, comm);
}

HcclResult HcclCommInitAll(uint32_t ndev, int32_t* devices, HcclComm* comms) {
    const char* fn = "HcclCommInitAll";
    if (devices == nullptr || comms == nullptr) return fail(HCCL_E_PTR, "{}: devices or comms is NULL", fn);
    if (ndev == 0) return fail(HCCL_E_PARA, "{}: ndev is 0", fn);
    std::set<int32_t> seen;
    for (uint32_t i = 0; i < ndev; ++i) {
        if (!runtime::deviceValid(devices[i]))
            return fail(HCCL_E_PARA, "{}: devices[{}] = {} is not a device (count {})", fn, i, devices[i],
                        runtime::deviceCount());
        if (!seen.insert(devices[i]).second) return fail(HCCL_E_PARA, "{}: device {} is listed twice", fn, devices[i]);
    }
    std::vector<Comm*> made(ndev, nullptr);
    HOSTCCL_CHECK(initAll(ndev, devices, made.data()));
    for (uint32_t i = 0; i < ndev; ++i) comms[i] = made[i];
    return HCCL_SUCCESS;
}

HcclResult HcclCreateSubCommConfig(HcclComm* comm, uint32_t rankNum, uint32_t* rankIds, uint64_t subCommId,
                                   uint32_t subCommRankId, HcclCommConfig* config, HcclComm* subComm) {
    const char* fn = "HcclCreateSubCommConfig";
    if (comm == nullptr || subComm == nullptr) return fail(HCCL_E_PTR, "{}: comm or subComm is NULL", fn);
    Comm* parent = nullptr;
    HOSTCCL_CHECK(checkComm(*comm, fn, &parent));
    if (rankIds == nullptr) {  // this rank is not a member
        *subComm = nullptr;
        return HCCL_SUCCESS;
    }
    if (rankNum == 0 || rankNum > parent->size())
        return fail(HCCL_E_PARA, parent->site(fn), "rankNum {} is not in [1, {}]", rankNum, parent->size());
    std::vector<uint32_t> ranks(rankIds, rankIds + rankNum);
    for (uint32_t i = 0; i < rankNum; ++i) {
        if (ranks[i] >= parent->size() || (i > 0 && ranks[i] <= ranks[i - 1]))
            return fail(HCCL_E_PARA, parent->site(fn), "rankIds must be ascending parent ranks; rankIds[{}] = {}", i,
                        ranks[i]);
    }
    if (subCommRankId >= rankNum || ranks[subCommRankId] != parent->rank())
        return fail(HCCL_E_PARA, parent->site(fn), "subCommRankId {} does not name this rank ({}) in rankIds",
                    subCommRankId, parent->rank());
    CommSettings options;
    HOSTCCL_CHECK(optionsFromConfig(config, &options));
    return publish(subComm,
                   [&](Comm** c) { return createSubComm(*parent, ranks, subCommId, subCommRankId, options, c); });
}

HcclResult HcclSetConfig(HcclConfig config, HcclConfigValue configValue) {
    if (config != HCCL_DETERMINISTIC) return fail(HCCL_E_NOT_SUPPORT, "HcclSetConfig: only HCCL_DETERMINISTIC is settable");
    if (configValue.value < 0 || configValue.value > 2)
        return fail(HCCL_E_PARA, "HcclSetConfig: deterministic value {} is not 0, 1 or 2", configValue.value);
    setProcessDeterministic(static_cast<uint32_t>(configValue.value));
    return HCCL_SUCCESS;
}

HcclResult HcclGetConfig(HcclConfig config, HcclConfigValue* configValue) {
    if (configValue == nullptr) return fail(HCCL_E_PTR, "HcclGetConfig: configValue is NULL");
    if (config != HCCL_DETERMINISTIC) return fail(HCCL_E_NOT_SUPPORT, "HcclGetConfig: only HCCL_DETERMINISTIC exists");
    configValue->value = static_cast<int32_t>(optionsFromEnv().deterministic);
    return HCCL_SUCCESS;
}

HcclResult HcclGetRankSize(HcclComm comm, uint32_t* rankSize) {
    if (rankSize == nullptr) return fail(HCCL_E_PTR, "HcclGetRankSize: rankSize is NULL");
    Comm* c = nullptr;
    HOSTCCL_CHECK(api::checkLive(comm, "HcclGetRankSize", &c));
    *rankSize = c->size();
    return HCCL_SUCCESS;
}

HcclResult HcclGetRankId(HcclComm comm, uint32_t* rank) {
    if (rank == nullptr) return fail(HCCL_E_PTR, "HcclGetRankId: rank is NULL");
    Comm* c = nullptr;
    HOSTCCL_CHECK(api::checkLive(comm, "HcclGetRankId", &c));
    *rank = c->rank();
    return HCCL_SUCCESS;
}

HcclResult HcclGetCommName(HcclComm comm, char* commName) {
    if (commName == nullptr) return fail(HCCL_E_PTR, "HcclGetCommName: commName is NULL");
    Comm* c = nullptr;
    HOSTCCL_CHECK(api::checkLive(comm, "HcclGetCommName", &c));
    const std::string& name = c->name();
    std::snprintf(commName, COMM_NAME_MAX_LENGTH, "%s", name.c_str());
    return HCCL_SUCCESS;
}

HcclResult HcclCommGetHandleWithName(const char* commName, HcclComm* comm) {
    if (commName == nullptr || comm == nullptr) return fail(HCCL_E_PTR, "HcclCommGetHandleWithName: NULL argument");
    Comm* c = findCommByName(std::string(commName, strnlen(commName, COMM_NAME_MAX_LENGTH)),
                                     runtime::currentDevice());
    if (c == nullptr) return fail(HCCL_E_NOT_FOUND, "HcclCommGetHandleWithName: no communicator named '{}'", commName);
    *comm = c;
    return HCCL_SUCCESS;
}

HcclResult HcclCommDestroy(HcclComm comm) {
    if (comm == nullptr) return fail(HCCL_E_PTR, "HcclCommDestroy: comm is NULL");
    Comm* c = unregisterComm(comm);
    if (c == nullptr) return fail(HCCL_E_PARA, "HcclCommDestroy: {} is not a live communicator (destroyed twice?)", comm);
    if (log::entryLogEnabled()) log::info("HcclCommDestroy(comm={})", c->name());
    c->quiesce();
    delete c;
    return HCCL_SUCCESS;
}

HcclResult HcclGetCommAsyncError(HcclComm comm, HcclResult* asyncError) {
    if (asyncError == nullptr) return fail(HCCL_E_PTR, "HcclGetCommAsyncError: asyncError is NULL");
    Comm* c = nullptr;
    HOSTCCL_CHECK(api::checkLive(comm, "HcclGetCommAsyncError", &c));
    *asyncError = c->asyncError();
    return HCCL_SUCCESS;
}

}  // extern "C"
