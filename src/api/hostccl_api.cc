// Entry points of hostccl's own extensions (include/hostccl/hostccl.h).
#include <algorithm>
#include <cstring>
#include <vector>

#include "api/validate.h"
#include "common/siphash.h"
#include "core/comm_init.h"
#include "core/launcher_env.h"
#include "core/topology/describe.h"
#include "hostccl/hostccl.h"
#include "monitor/monitor.h"

using namespace hostccl;

namespace {
[[maybe_unused]] const bool kMonitorInstalledByExtensions = monitor::install();  // as in comm_api.cc

// The survivors' communicator. Its id mixes the shrink's ordinal with the excluded
// set, so survivors that disagree on the set never join the same communicator.
HcclResult shrinkComm(Comm& parent, const std::vector<uint32_t>& excluded, CommSettings options,
                      HcclComm* newComm) {
    std::vector<uint32_t> members;
    for (uint32_t r = 0; r < parent.size(); ++r)
        if (!std::binary_search(excluded.begin(), excluded.end(), r)) members.push_back(r);
    const uint32_t subRank = static_cast<uint32_t>(
        std::find(members.begin(), members.end(), parent.rank()) - members.begin());
    const uint64_t generation = parent.nextShrinkGeneration();
    std::vector<uint64_t> key{generation};
    key.insert(key.end(), excluded.begin(), excluded.end());
    const uint64_t id = siphash24(Secret{0x736872696e6b3031ULL, generation}, key.data(), key.size() * sizeof key[0]) |
                        (uint64_t(1) << 63);  // apart from user sub-communicator ids
    if (options.name.empty()) options.name = parent.name() + "_shrink" + std::to_string(generation);
    Comm* c = nullptr;
    HcclResult rc = createSubComm(parent, members, id, subRank, options, &c);
    if (rc == HCCL_SUCCESS) *newComm = c;
    return rc;
}
}  // namespace

extern "C" {

HcclResult HostcclCommInitFromEnv(HcclComm* comm) {
    if (comm == nullptr) return fail(HCCL_E_PTR, "HostcclCommInitFromEnv: comm is NULL");
    Comm* c = nullptr;
    CommSettings options;
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
    if (!detectLauncherRank(&info, &why)) return HCCL_E_NOT_FOUND;
    *rank = info.rank;
    *size = info.size;
    *localRank = info.localRank;
    return HCCL_SUCCESS;
}

HcclResult HostcclGetLauncherMeetingPoint(char* host, uint64_t capacity, uint32_t* port) {
    const char* fn = "HostcclGetLauncherMeetingPoint";
    if (host == nullptr || port == nullptr) return fail(HCCL_E_PTR, "{}: host or port is NULL", fn);
    LauncherInfo info;
    std::string why;
    if (!detectLauncher(&info, &why)) return HCCL_E_NOT_FOUND;  // HostcclCommInitFromEnv says why
    if (info.rootHost.size() + 1 > capacity)
        return fail(HCCL_E_PARA, "{}: the host {} needs {} bytes, capacity is {}", fn, info.rootHost,
                    info.rootHost.size() + 1, capacity);
    std::memcpy(host, info.rootHost.c_str(), info.rootHost.size() + 1);
    *port = info.rootPort;
    return HCCL_SUCCESS;
}

HcclResult HostcclCommGetFailure(HcclComm comm, HcclResult* code, int32_t* rank, char* reason, uint64_t capacity) {
    const char* fn = "HostcclCommGetFailure";
    Comm* c = nullptr;
    HOSTCCL_CHECK(api::checkLive(comm, fn, &c));
    if (code == nullptr || rank == nullptr) return fail(HCCL_E_PTR, "{}: code or rank is NULL", fn);
    if (reason != nullptr && capacity == 0) return fail(HCCL_E_PARA, "{}: capacity is 0", fn);
    CommFailure::Record r = c->failure().record();
    *code = r.code;
    *rank = static_cast<int32_t>(r.culprit);
    if (reason != nullptr) {
        size_t n = std::min<size_t>(r.text.size(), capacity - 1);
        std::memcpy(reason, r.text.data(), n);
        reason[n] = '\0';
    }
    return HCCL_SUCCESS;
}

HcclResult HostcclCommAbort(HcclComm comm) {
    if (comm == nullptr) return fail(HCCL_E_PTR, "HostcclCommAbort: comm is NULL");
    Comm* c = unregisterComm(comm);
    if (c == nullptr) return fail(HCCL_E_PARA, "HostcclCommAbort: {} is not a live communicator", comm);
    log::warn("{}: aborted by HostcclCommAbort", describe(c->site("abort")));
    c->abort("communicator aborted by HostcclCommAbort");
    c->quiesce();
    delete c;
    return HCCL_SUCCESS;
}

HcclResult HostcclCommShrink(HcclComm comm, const uint32_t* excludeRanks, uint32_t excludeCount,
                             HcclCommConfig* config, HcclComm* newComm) {
    const char* fn = "HostcclCommShrink";
    Comm* parent = nullptr;
    HOSTCCL_CHECK(api::checkLive(comm, fn, &parent));  // a failed communicator is the usual case
    if (newComm == nullptr || (excludeCount > 0 && excludeRanks == nullptr))
        return fail(HCCL_E_PTR, "{}: newComm or excludeRanks is NULL", fn);
    std::vector<uint32_t> excluded(excludeRanks, excludeRanks + excludeCount);
    std::sort(excluded.begin(), excluded.end());
    for (size_t i = 0; i < excluded.size(); ++i) {
        if (excluded[i] >= parent->size() || (i > 0 && excluded[i] == excluded[i - 1]))
            return fail(HCCL_E_PARA, parent->site(fn), "excludeRanks names rank {} twice or outside [0, {})",
                        excluded[i], parent->size());
        if (excluded[i] == parent->rank())
            return fail(HCCL_E_PARA, parent->site(fn), "excludeRanks names this rank ({})", parent->rank());
    }
    CommSettings options;
    HOSTCCL_CHECK(optionsFromConfig(config, &options));
    return shrinkComm(*parent, excluded, options, newComm);
}

HcclResult HostcclCommSplit(HcclComm comm, uint32_t rankNum, const uint32_t* rankIds, uint64_t subCommId,
                            HcclCommConfig* config, HcclComm* subComm) {
    const char* fn = "HostcclCommSplit";
    Comm* parent = nullptr;
    HOSTCCL_CHECK(api::checkComm(comm, fn, &parent));
    if (rankIds == nullptr || subComm == nullptr) return fail(HCCL_E_PTR, "{}: rankIds or subComm is NULL", fn);
    if (rankNum == 0 || rankNum > parent->size())
        return fail(HCCL_E_PARA, parent->site(fn), "rankNum {} is not in [1, {}]", rankNum, parent->size());
    std::vector<uint32_t> ranks(rankIds, rankIds + rankNum);
    std::vector<uint32_t> sorted = ranks;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < sorted.size(); ++i) {
        if (sorted[i] >= parent->size() || (i > 0 && sorted[i] == sorted[i - 1]))
            return fail(HCCL_E_PARA, parent->site(fn), "rankIds names rank {} twice or outside [0, {})", sorted[i],
                        parent->size());
    }
    const auto me = std::find(ranks.begin(), ranks.end(), parent->rank());
    if (me == ranks.end()) return fail(HCCL_E_PARA, parent->site(fn), "rankIds does not name this rank ({})", parent->rank());
    CommSettings options;
    HOSTCCL_CHECK(optionsFromConfig(config, &options));
    Comm* c = nullptr;
    HOSTCCL_CHECK(createSubComm(*parent, ranks, subCommId, uint32_t(me - ranks.begin()), options, &c));
    *subComm = c;
    return HCCL_SUCCESS;
}

HcclResult HostcclCommSetExecTimeout(HcclComm comm, int32_t seconds) {
    const char* fn = "HostcclCommSetExecTimeout";
    Comm* c = nullptr;
    HOSTCCL_CHECK(api::checkLive(comm, fn, &c));
    if (seconds < 0) return fail(HCCL_E_PARA, c->site(fn), "seconds {} is negative (0 = no limit)", seconds);
    c->setExecTimeout(seconds);
    return HCCL_SUCCESS;
}

HcclResult HostcclCommDescribe(HcclComm comm, char* text, uint64_t capacity) {
    const char* fn = "HostcclCommDescribe";
    Comm* c = nullptr;
    HOSTCCL_CHECK(api::checkLive(comm, fn, &c));
    if (text == nullptr) return fail(HCCL_E_PTR, "{}: text is NULL", fn);
    if (capacity == 0) return fail(HCCL_E_PARA, "{}: capacity is 0", fn);
    std::string d = describeCommunicator(*c);
    size_t n = std::min<size_t>(d.size(), capacity - 1);
    std::memcpy(text, d.data(), n);
    text[n] = '\0';
    return HCCL_SUCCESS;
}

HcclResult HostcclCommGetRankHost(HcclComm comm, uint32_t rank, uint32_t* hostIndex) {
    const char* fn = "HostcclCommGetRankHost";
    Comm* c = nullptr;
    HOSTCCL_CHECK(api::checkLive(comm, fn, &c));
    if (hostIndex == nullptr) return fail(HCCL_E_PTR, "{}: hostIndex is NULL", fn);
    HOSTCCL_CHECK(api::checkRank(rank, *c, fn, "rank"));
    std::vector<std::string> hosts;  // in order of first appearance
    for (const PeerInfo& p : c->peers()) {
        if (std::find(hosts.begin(), hosts.end(), p.hostId) == hosts.end()) hosts.push_back(p.hostId);
        if (p.rank == rank) {
            *hostIndex = static_cast<uint32_t>(std::find(hosts.begin(), hosts.end(), p.hostId) - hosts.begin());
            return HCCL_SUCCESS;
        }
    }
    return fail(HCCL_E_INTERNAL, "{}: rank {} missing from the rank table", fn, rank);
}

}  // extern "C"
