#include "monitor/job_gather.h"

#include <fmt/format.h>
#include <unistd.h>

#include <set>

#include "monitor/http_fetch.h"
#include "monitor/job_view.h"
#include "monitor/status_json.h"

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

}  // namespace

json viewFromAnswers(const CommSnapshot& s, const std::vector<json>& answers) {
    const std::string id = fmt::format("{:016x}", s.commId);
    const std::vector<PeerInfo>& peers = *s.peers;
    std::vector<JobRank> ranks(peers.size());
    for (uint32_t r = 0; r < ranks.size(); ++r) {
        ranks[r].rank = r;
        ranks[r].who = whoIs(peers[r]);
        if (peers[r].metricsPort != 0) ranks[r].endpoint = net::Endpoint{peers[r].ip, peers[r].metricsPort}.str();
    }
    json findings = json::array();
    for (const json& answer : answers) {
        if (!answer.is_object()) continue;
        bool holdsARank = false;
        for (const json& c : answer.value("communicators", json::array())) {
            const uint32_t r = c.value("rank", uint32_t(UINT32_MAX));
            if (c.value("comm_id", "") != id || r >= peers.size()) continue;
            if (c.value("pid", uint32_t(0)) != peers[r].pid || c.value("host", "") != peers[r].hostId) continue;
            ranks[r].status = c;
            holdsARank = true;
        }
        if (holdsARank)
            for (const json& f : answer.value("findings", json::array())) findings.push_back(f);
    }
    return jobView(s.comm, s.commId, ranks, findings);
}

json gatherJob(const std::vector<CommSnapshot>& local, const std::vector<Finding>& localFindings,
               std::chrono::milliseconds limit) {
    std::vector<json> answers{statusJson(local, localFindings)};
    for (const std::string& body : fetchAll(endpointsOf(local), "/status.json", limit))
        if (!body.empty()) answers.push_back(json::parse(body, nullptr, false));
    json views = json::array();
    std::set<uint64_t> done;
    for (const CommSnapshot& s : local)
        if (s.peers && done.insert(s.commId).second) views.push_back(viewFromAnswers(s, answers));  // one per communicator
    return views;
}

}  // namespace hostccl::monitor
