// hostccl-status: the state of a running job, asked of any one of its processes'
// monitoring endpoints (HOSTCCL_METRICS_PORT), which gathers every other process's.
//   hostccl-status host:port [--json] [--timeout SECONDS]
// Prints per communicator how far every rank has got, who does not answer, stuck
// collectives and the rank they wait for, stragglers and slow links.
// When that endpoint does not answer, a process of the same job on the ports next to
// it does (the processes of a host listen on consecutive ports).
// Exit status: 0 nothing found, 1 something found (a finding, a rank not
// answering), 2 no endpoint of the job could be asked.
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "monitor/http_fetch.h"
#include "monitor/job_view.h"
#include "monitor/monitor.h"

namespace {

// host:port, the host an IPv4 address or a name (resolved to its first IPv4 address).
bool parseEndpoint(const std::string& text, hostccl::net::Endpoint* out) {
    const size_t colon = text.rfind(':');
    if (colon == std::string::npos || colon == 0) return false;
    try {
        size_t used = 0;
        const unsigned long port = std::stoul(text.substr(colon + 1), &used);
        if (port == 0 || port > 65535 || used != text.size() - colon - 1) return false;
        out->port = uint16_t(port);
    } catch (const std::exception&) {
        return false;
    }
    addrinfo hints{};
    hints.ai_family = AF_INET;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* res = nullptr;
    if (getaddrinfo(text.substr(0, colon).c_str(), nullptr, &hints, &res) != 0 || res == nullptr) return false;
    char ip[INET_ADDRSTRLEN] = {0};
    inet_ntop(AF_INET, &reinterpret_cast<sockaddr_in*>(res->ai_addr)->sin_addr, ip, sizeof ip);
    freeaddrinfo(res);
    out->ip = ip;
    return true;
}

using Ms = std::chrono::milliseconds;

// The job views an endpoint answers /job.json with; not an array when it did not answer.
nlohmann::json askJob(const hostccl::net::Endpoint& endpoint, Ms limit) {
    const std::string body = hostccl::monitor::fetchAll({endpoint}, "/job.json", limit)[0];
    return nlohmann::json::parse(body, nullptr, false);
}

bool loopback(const std::string& ip) { return ip.rfind("127.", 0) == 0; }

// The views (communicators) of which one rank's process listens at `asked`. The job's
// tables name ranks by the address they bootstrapped on; an asked loopback address
// matches any of them on the port.
nlohmann::json viewsHolding(const nlohmann::json& views, const hostccl::net::Endpoint& asked) {
    nlohmann::json out = nlohmann::json::array();
    for (const nlohmann::json& v : views)
        for (const nlohmann::json& r : v.value("ranks", nlohmann::json::array())) {
            const std::string e = r.value("endpoint", "");
            const size_t colon = e.rfind(':');
            if (colon == std::string::npos || e.substr(colon + 1) != std::to_string(asked.port)) continue;
            if (e.substr(0, colon) != asked.ip && !loopback(asked.ip)) continue;
            out.push_back(v);
            break;
        }
    return out;
}

// When the asked endpoint does not answer (its process stopped, ended or cut off): the
// job's other processes on that host listen on the ports next to it (consecutive from
// HOSTCCL_METRICS_PORT). Asked nearest first, in widening waves (a host's few processes
// are usually within a few ports), each wave at once; the nearest whose views hold the
// asked endpoint answers, with those views only, so another job's endpoint never
// answers for this one.
bool askNeighbours(const hostccl::net::Endpoint& asked, Ms limit, nlohmann::json* views, hostccl::net::Endpoint* who) {
    const int waves[][2] = {{1, 4}, {5, 16}, {17, hostccl::monitor::kMetricsPortTries - 1}};
    for (const auto& [from, to] : waves) {
        std::vector<hostccl::net::Endpoint> near;
        for (int d = from; d <= to; ++d)
            for (int port : {int(asked.port) - d, int(asked.port) + d})
                if (port > 0 && port <= 65535) near.push_back({asked.ip, uint16_t(port)});
        const std::vector<std::string> bodies = hostccl::monitor::fetchAll(near, "/job.json", limit);
        for (size_t i = 0; i < near.size(); ++i) {  // nearest first
            const nlohmann::json answer = nlohmann::json::parse(bodies[i], nullptr, false);
            if (!answer.is_array()) continue;
            nlohmann::json mine = viewsHolding(answer, asked);
            if (mine.empty()) continue;
            *views = std::move(mine);
            *who = near[i];
            return true;
        }
    }
    return false;
}

bool anythingFound(const nlohmann::json& views) {
    for (const nlohmann::json& v : views)
        if (!v["findings"].empty() || !v["not_answering"].empty()) return true;
    return false;
}

}  // namespace

int main(int argc, char** argv) {
    CLI::App app{"hostccl-status: what a running hostccl job is doing, asked of any rank's monitoring endpoint"};
    std::string where;
    bool json = false;
    double timeout = 5;
    app.add_option("endpoint", where, "host:port of any process's HOSTCCL_METRICS_PORT endpoint")->required();
    app.add_flag("--json", json, "print the job view as JSON (/job.json)");
    app.add_option("--timeout", timeout, "seconds to wait for the answer")->check(CLI::Range(0.1, 3600.0));
    CLI11_PARSE(app, argc, argv);
    hostccl::net::Endpoint endpoint;
    if (!parseEndpoint(where, &endpoint)) {
        std::fprintf(stderr, "hostccl-status: '%s' is not host:port (a host name or IPv4 address that resolves, a port 1-65535)\n",
                     where.c_str());
        return 2;
    }
    const Ms limit(int64_t(timeout * 1000));
    nlohmann::json views = askJob(endpoint, limit);
    if (!views.is_array()) {
        hostccl::net::Endpoint other;
        if (!askNeighbours(endpoint, limit, &views, &other)) {
            std::fprintf(stderr,
                         "hostccl-status: no job view from %s (refused, or no answer within %.1f s; is HOSTCCL_METRICS_PORT "
                         "set there?), nor from a process of its job on the %d ports either side of it\n",
                         endpoint.str().c_str(), timeout, hostccl::monitor::kMetricsPortTries - 1);
            return 2;
        }
        // On stderr under --json, which keeps stdout one JSON document.
        std::fprintf(json ? stderr : stdout, "%s did not answer; asked %s, a process of its job, instead\n",
                     endpoint.str().c_str(), other.str().c_str());
    }
    if (json) std::printf("%s\n", views.dump(1).c_str());
    else std::printf("%s", views.empty() ? "no communicator in that process\n" : hostccl::monitor::jobText(views).c_str());
    return anythingFound(views) ? 1 : 0;
}
