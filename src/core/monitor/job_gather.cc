#include "core/monitor/job_gather.h"

#include <fmt/format.h>
#include <unistd.h>

#include <map>
#include <set>

#include "core/monitor/http_fetch.h"
#include "core/monitor/job_view.h"
#include "core/monitor/status_json.h"

namespace hostccl::monitor {

namespace {
using nlohmann::json;

bool thisProcess(const PeerInfo& p, const CommSnapshot& s) { return p.pid == s.pid && p.hostId == s.host; }

// The other processes' endpoints of every communicator here, each once.
std::vector<net::Endpoint> endpointsOf(const std::vector<CommSnapshot>& local) {
    std::set<std::pair<std::string, uint16_t>> seen;
    std::vector<net::Endpoint> out;
    for (const CommSnapshot& s : local) {
        if (!s.peers) continue;
        for (const PeerInfo& p : *s.peers)
            if (p.metricsPort != 0 && !thisProcess(p, s) && seen.insert({p.ip, p.metricsPort}).second)
                out.push_back({p.ip, p.metricsPort});
    }
    return out;
}

// Every process's status: its communicators' entries by (comm id, rank), its findings.
struct Statuses {
    std::map<std::pair<std::string, uint32_t>, json> byRank;
    json findings = json::array();
    void add(const json& status) {
        if (!status.is_object()) return;
        for (const json& c : status.value("communicators", json::array()))
            byRank[{c.value("comm_id", ""), c.value("rank", 0u)}] = c;
        for (const json& f : status.value("findings", json::array())) findings.push_back(f);
    }
};
}  // namespace

json gatherJob(const std::vector<CommSnapshot>& local, const std::vector<Finding>& localFindings,
               std::chrono::milliseconds limit) {
    Statuses st;
    st.add(statusJson(local, localFindings));
    const std::vector<net::Endpoint> endpoints = endpointsOf(local);
    for (const std::string& body : fetchAll(endpoints, "/status.json", limit))
        if (!body.empty()) st.add(json::parse(body, nullptr, false));
    json views = json::array();
    std::set<uint64_t> done;
    for (const CommSnapshot& s : local) {
        if (!s.peers || !done.insert(s.commId).second) continue;  // one view per communicator
        const std::string id = fmt::format("{:016x}", s.commId);
        std::vector<JobRank> ranks(s.peers->size());
        for (uint32_t r = 0; r < ranks.size(); ++r) {
            ranks[r].rank = r;
            ranks[r].who = whoIs((*s.peers)[r]);
            auto it = st.byRank.find({id, r});
            if (it != st.byRank.end()) ranks[r].status = it->second;
        }
        views.push_back(jobView(s.comm, s.commId, ranks, st.findings));
    }
    return views;
}

}  // namespace hostccl::monitor
