#include "core/comm_init.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <unistd.h>

#include <algorithm>
#include <set>
#include <thread>

#include "algorithms/selector.h"
#include "common/env.h"
#include "core/bootstrap/rank_table.h"
#include "core/bootstrap/rendezvous.h"
#include "core/bootstrap/root_info.h"
#include "core/launcher_env.h"
#include "core/metrics/monitor_hooks.h"
#include "core/net/acceptor.h"
#include "core/net/whitelist.h"
#include "core/topology/machine.h"
#include "runtime/device.h"

namespace hostccl {

namespace {

std::string hexId(uint64_t id) { return fmt::format("{:016x}", id); }

// A host name or dotted address to a dotted IPv4 address ("" when unknown).
std::string resolveHost(const std::string& host) {
    addrinfo hints{};
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    if (getaddrinfo(host.c_str(), nullptr, &hints, &res) != 0 || res == nullptr) return host;
    char buf[INET_ADDRSTRLEN] = {0};
    inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr, buf, sizeof buf);
    freeaddrinfo(res);
    return buf;
}

// This rank's entry for the rendezvous; the IP is filled from the connection
// to the root unless HCCL_IF_IP names it.
HcclResult selfInfo(uint32_t rank, std::string hostId, PeerInfo* out, const ErrorSite& site) {
    net::Acceptor& acc = net::Acceptor::instance();
    if (!acc.ok()) return fail(HCCL_E_TCP_CONNECT, site, "peer listener unavailable: {}", acc.startError());
    out->rank = rank;
    out->ip = env::raw("HCCL_IF_IP").value_or("");
    out->port = acc.port();
    out->device = runtime::currentDeviceOr(0);
    out->pid = static_cast<uint32_t>(getpid());
    out->hostId = std::move(hostId);
    out->hostCores = static_cast<uint16_t>(std::min<uint32_t>(thisMachine().cores, UINT16_MAX));
    out->hostNumaNodes = static_cast<uint16_t>(std::min<uint32_t>(thisMachine().numaNodes, UINT16_MAX));
    monitor::ensureStarted();  // its endpoint's port goes into the table
    out->metricsPort = monitor::endpointPort();
    return HCCL_SUCCESS;
}

HcclResult gatherAndCreate(const net::Endpoint& server, const Secret& secret, uint64_t id, uint32_t nRanks,
                           uint32_t rank, std::string hostId, CommSettings options, Comm** out) {
    ErrorSite site;
    site.comm = options.name;
    site.rank = rank;
    site.op = "init";
    PeerInfo self;
    // Before the peer listener admits anyone. A rank that cannot take part says so
    // to the rendezvous, so the others fail now with its reason, not at the timeout.
    HcclResult rc = net::loadWhitelist();
    if (rc == HCCL_SUCCESS) rc = selfInfo(rank, std::move(hostId), &self, site);
    if (rc != HCCL_SUCCESS) {
        bootstrap::reportJoinFailure(server, secret, id, nRanks, rank, rc, lastFailureReason());
        return rc;
    }
    std::vector<PeerInfo> table;
    if (HcclResult joined = bootstrap::joinRendezvous(server, secret, id, nRanks, self, &table, connectDeadline(), site);
        joined != HCCL_SUCCESS) {
        bootstrap::awaitRendezvousFailureSpread(id, connectDeadline());
        return joined;
    }
    CommIdentity identity{id, secret, rank, nRanks};
    return Comm::create(identity, std::move(table), self.device, std::move(options), out);
}

}  // namespace

HcclResult makeRootInfo(HcclRootInfo* out) {
    HOSTCCL_CHECK(net::loadWhitelist());
    RootInfo info;
    info.ip = net::chooseLocalIp();
    info.secret = randomSecret();
    info.bootstrapId = randomU64();
    bootstrap::RendezvousSpec spec{"", 0, info.secret, info.bootstrapId};
    std::string err;
    if (!bootstrap::startRendezvousServer(spec, &info.port, &err))
        return fail(HCCL_E_TCP_CONNECT, "HcclGetRootInfo: cannot listen: {}", err);
    encodeRootInfo(info, out);
    log::info("root info: rendezvous at {}:{} id {}", info.ip, info.port, hexId(info.bootstrapId));
    return HCCL_SUCCESS;
}

HcclResult initFromRootInfo(uint32_t nRanks, const HcclRootInfo* rootInfo, uint32_t rank, const CommSettings& options,
                            Comm** out) {
    RootInfo info;
    std::string why;
    if (!decodeRootInfo(rootInfo, &info, &why)) return fail(HCCL_E_PARA, "HcclCommInitRootInfo: malformed root info: {}", why);
    CommSettings opts = options;
    if (opts.name.empty()) opts.name = "hostccl-" + hexId(info.bootstrapId);
    return gatherAndCreate(net::Endpoint{info.ip, info.port}, info.secret, info.bootstrapId, nRanks, rank,
                           hostIdentity(), std::move(opts), out);
}

HcclResult initFromRankTable(const char* path, uint32_t rank, const CommSettings& options, Comm** out) {
    RankTable table;
    std::string content, why;
    HcclResult rc = loadRankTable(path, &table, &content, &why);
    if (rc != HCCL_SUCCESS) return fail(rc, "rank table {}: {}", path, why);
    if (rank >= table.ranks.size())
        return fail(HCCL_E_PARA, "rank table {}: rank {} is not in the table ({} ranks)", path, rank, table.ranks.size());
    const RankTableEntry& r0 = table.ranks[0];
    std::string ip = !r0.hostIp.empty() ? r0.hostIp : !r0.deviceIp.empty() ? r0.deviceIp : "";
    if (ip.empty() && table.serverCount > 1)
        return fail(HCCL_E_PARA, "rank table {}: rank 0 has neither host_ip nor device_ip; a multi-server table needs one", path);
    if (ip.empty()) ip = "127.0.0.1";
    uint16_t port = r0.hostPort ? r0.hostPort : r0.devicePort;
    if (port == 0) port = static_cast<uint16_t>(env::getInt("HOSTCCL_RANKTABLE_PORT", 1, 65535));
    // Everyone who can read the table can join: the secret is a keyed hash of it.
    Secret secret{siphash24(Secret{0x686f737463636c31ULL, 0x72616e6b7461626cULL}, content.data(), content.size()),
                  siphash24(Secret{0x7461626c65736563ULL, 0x72657431686f7374ULL}, content.data(), content.size())};
    uint64_t id = siphash24(secret, "rank-table", 10);
    HOSTCCL_CHECK(net::loadWhitelist());
    if (rank == 0) {
        bootstrap::RendezvousSpec spec{"", port, secret, id};
        uint16_t bound = 0;
        if (!bootstrap::startRendezvousServer(spec, &bound, &why))
            return fail(HCCL_E_TCP_CONNECT, "rank table {}: rank 0 cannot serve the rendezvous on port {}: {}", path, port, why);
    }
    CommSettings opts = options;
    if (opts.name.empty()) opts.name = "hccl_world_group";
    const std::string hostId = "server:" + table.ranks[rank].serverId;
    return gatherAndCreate(net::Endpoint{ip, port}, secret, id, static_cast<uint32_t>(table.ranks.size()), rank,
                           hostId, std::move(opts), out);
}

HcclResult initFromLauncherEnv(const CommSettings& options, Comm** out) {
    LauncherInfo info;
    std::string why;
    if (!detectLauncher(&info, &why)) return fail(HCCL_E_PARA, "HostcclCommInitFromEnv: {}", why);
    std::string material = fmt::format("{}|{}:{}|{}", info.jobKey, info.rootHost, info.rootPort, info.size);
    Secret secret{siphash24(Secret{0x6c61756e63686572ULL, 0x2d6a6f622d6b6579ULL}, material.data(), material.size()),
                  siphash24(Secret{0x6b65792d6a6f622dULL, 0x72656863616e756cULL}, material.data(), material.size())};
    uint64_t id = siphash24(secret, "launcher", 8);
    HOSTCCL_CHECK(net::loadWhitelist());
    if (info.rank == 0) {
        bootstrap::RendezvousSpec spec{"", info.rootPort, secret, id};
        uint16_t bound = 0;
        if (!bootstrap::startRendezvousServer(spec, &bound, &why))
            return fail(HCCL_E_TCP_CONNECT, "HostcclCommInitFromEnv: rank 0 cannot listen on port {}{}: {}", info.rootPort,
                        info.rootDerived ? " (derived from SLURM_JOB_ID and SLURM_STEP_ID; set HOSTCCL_ROOT_ADDR=host:port "
                                           "or run srun --resv-ports)"
                                         : "",
                        why);
    }
    if (runtime::currentDevice() < 0) runtime::setCurrentDevice(static_cast<int32_t>(info.localRank % runtime::deviceCount()));
    CommSettings opts = options;
    if (opts.name.empty()) opts.name = "hostccl-" + info.launcher + "-" + hexId(id);
    log::info("launcher {}: rank {}/{} local rank {} meeting at {}:{}", info.launcher, info.rank, info.size,
              info.localRank, info.rootHost, info.rootPort);
    return gatherAndCreate(net::Endpoint{resolveHost(info.rootHost), info.rootPort}, secret, id, info.size, info.rank,
                           hostIdentity(), std::move(opts), out);
}

HcclResult initAll(uint32_t ndev, const int32_t* devices, Comm** out) {
    CommSettings options;
    HOSTCCL_CHECK(optionsFromConfig(nullptr, &options));  // before anything listens
    HcclRootInfo root;
    HOSTCCL_CHECK(makeRootInfo(&root));
    std::vector<HcclResult> results(ndev, HCCL_SUCCESS);
    std::vector<std::thread> threads;
    for (uint32_t i = 0; i < ndev; ++i) {
        threads.emplace_back([&, i] {
            runtime::setCurrentDevice(devices[i]);
            results[i] = initFromRootInfo(ndev, &root, i, options, &out[i]);
        });
    }
    for (auto& t : threads) t.join();
    for (uint32_t i = 0; i < ndev; ++i) {
        if (results[i] == HCCL_SUCCESS) continue;
        for (uint32_t j = 0; j < ndev; ++j) {  // all or nothing
            if (results[j] == HCCL_SUCCESS && unregisterComm(out[j]) != nullptr) delete out[j];
            out[j] = nullptr;
        }
        return results[i];
    }
    return HCCL_SUCCESS;
}

HcclResult createSubComm(const Comm& parent, const std::vector<uint32_t>& parentRanks, uint64_t subCommId,
                         uint32_t subRank, const CommSettings& options, Comm** out) {
    std::vector<PeerInfo> table;
    for (uint32_t i = 0; i < parentRanks.size(); ++i) {
        PeerInfo p = parent.peers()[parentRanks[i]];
        p.rank = i;
        table.push_back(p);
    }
    uint64_t key[2] = {parent.id(), subCommId};
    CommIdentity identity{siphash24(parent.secret(), key, sizeof key), parent.secret(), subRank,
                          static_cast<uint32_t>(parentRanks.size())};
    CommSettings opts = options;
    if (opts.name.empty()) opts.name = parent.name() + "_sub_" + std::to_string(subCommId);
    opts.inheritedCosts = modelOf(*parent.view().costs).params();  // same links, already agreed
    return Comm::create(identity, std::move(table), parent.device(), std::move(opts), out);
}

}  // namespace hostccl
