#include "sim/probe.h"

#include <fmt/format.h>

#include <cmath>
#include <regex>
#include <vector>

#include "algorithms/selector.h"
#include "core/comm.h"
#include "hccl/hccl.h"
#include "hostccl/hostccl.h"
#include "sim/bulk_probe.h"

namespace hostccl::sim {

namespace {
// Hosts in order of their lowest rank, as the communicator numbers them.
Platform fromCommunicator(const Comm& c) {
    const std::vector<uint32_t>& nodeOf = *c.view().nodeOf;
    uint32_t onFirst = 0, cores = 1;
    for (uint32_t r = 0; r < c.size(); ++r)
        if (nodeOf[r] == 0) {
            ++onFirst;
            cores = std::max<uint32_t>(cores, c.peers()[r].hostCores);
        }
    bool rdma = false;
    for (uint32_t r = 0; r < c.size(); ++r)
        if (const transport::Link* l = c.view().links->existing(r)) rdma = rdma || l->linkClass() == LinkClass::Rdma;
    const CostParams& p = modelOf(*c.view().costs).params();
    return fromCostParams(p, c.view().nodes, onFirst, cores, rdma ? LinkClass::Rdma : LinkClass::Tcp);
}
}  // namespace

bool probePlatform(uint32_t localRanks, Platform* out, bool* printer, std::string* why) {
    std::vector<HcclComm> comms;
    HcclResult rc = HCCL_SUCCESS;
    if (localRanks == 0) {
        comms.resize(1);
        rc = HostcclCommInitFromEnv(&comms[0]);
    } else {
        comms.resize(localRanks);
        std::vector<int32_t> devices(localRanks);
        for (uint32_t i = 0; i < localRanks; ++i) devices[i] = static_cast<int32_t>(i);
        rc = HcclCommInitAll(localRanks, devices.data(), comms.data());
    }
    if (rc != HCCL_SUCCESS) {
        *why = fmt::format("creating the communicator to probe failed: {}", HcclGetErrorString(rc));
        return false;
    }
    const Comm& first = *static_cast<const Comm*>(comms[0]);
    *out = fromCommunicator(first);
    if (out->hosts * out->ranksPerHost != first.size()) {
        *why = fmt::format("the hosts hold different numbers of ranks ({} ranks on {} hosts); the simulator takes an "
                           "even layout",
                           first.size(), out->hosts);
        for (HcclComm c : comms) HcclCommDestroy(c);
        return false;
    }
    *printer = first.rank() == 0;
    const bool shmProbed = std::string(modelOf(*first.view().costs).params().linkSource[size_t(LinkClass::Shm)]) == "probe";
    const bool measured = measureBulk(comms, out, shmProbed, why);
    for (HcclComm c : comms) HcclCommDestroy(c);
    return measured;
}

bool platformFromDescription(const std::string& text, Platform* out, std::string* why) {
    std::smatch m;
    static const std::regex shape(R"((\d+) ranks on (\d+) hosts?)");
    static const std::regex cores(R"(host 0 \([^)]*\): (\d+) cores)");
    static const std::regex link(R"(([a-z0-9_]+) alpha ([0-9.]+)us(?: \(crowded [0-9.]+us\))? beta ([0-9.]+)GB/s)");
    static const std::regex rates(R"(reduce ([0-9.]+)GB/s \([a-z]+\), copy ([0-9.]+)GB/s)");
    if (!std::regex_search(text, m, shape)) {
        *why = "no 'N ranks on M hosts' line (is this HostcclCommDescribe's text?)";
        return false;
    }
    const uint32_t ranks = std::stoul(m[1]), hosts = std::stoul(m[2]);
    if (hosts == 0 || ranks % hosts != 0) {
        *why = fmt::format("{} ranks on {} hosts is not an even layout", ranks, hosts);
        return false;
    }
    CostParams p = CostParams::defaults();
    bool sawShm = false;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), link); it != std::sregex_iterator(); ++it) {
        const std::string kind = (*it)[1];
        LinkClass c = LinkClass::Tcp;
        if (!linkClassNamed(kind, &c)) continue;  // a class this build does not know: its defaults stay
        p.of(c).alpha = std::stod((*it)[2]) * 1e-6;
        p.of(c).beta = 1e-9 / std::stod((*it)[3]);
        sawShm = sawShm || c == LinkClass::Shm;
    }
    if (!sawShm || !std::regex_search(text, m, rates)) {
        *why = "no 'cost model:' line with link and reduce/copy rates";
        return false;
    }
    p.gamma = 1e-9 / std::stod(m[1]);
    p.copyBeta = 1e-9 / std::stod(m[2]);
    static const std::regex nic(R"(, nic ([0-9.]+)GB/s)");
    if (std::regex_search(text, m, nic)) p.nicBeta = 1e-9 / std::stod(m[1]);
    bool finite = std::isfinite(p.gamma) && std::isfinite(p.copyBeta);
    for (const LinkCost& l : p.link) finite = finite && std::isfinite(l.beta);
    if (!finite) {
        *why = "a rate in the cost model line is zero";
        return false;
    }
    const uint32_t hostCores = std::regex_search(text, m, cores) ? std::stoul(m[1]) : 0;
    *out = fromCostParams(p, hosts, ranks / hosts, hostCores, LinkClass::Tcp);
    return true;
}

}  // namespace hostccl::sim
