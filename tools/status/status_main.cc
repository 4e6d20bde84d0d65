// hostccl-status: the state of a running job, asked of any one of its processes'
// monitoring endpoints (HOSTCCL_METRICS_PORT), which gathers every other process's.
//   hostccl-status host:port [--json] [--timeout SECONDS]
// Prints per communicator how far every rank has got, who does not answer, stuck
// collectives and the rank they wait for, stragglers and slow links.
// Exit status: 0 nothing found, 1 something found (a finding, a rank not
// answering), 2 the endpoint could not be asked.
#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "core/monitor/http_fetch.h"
#include "core/monitor/job_view.h"

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
    const std::string body =
        hostccl::monitor::fetchAll({endpoint}, "/job.json", std::chrono::milliseconds(int64_t(timeout * 1000)))[0];
    const nlohmann::json views = nlohmann::json::parse(body, nullptr, false);
    if (body.empty() || views.is_discarded() || !views.is_array()) {
        std::fprintf(stderr,
                     "hostccl-status: no job view from %s (refused, or no answer within %.1f s; is HOSTCCL_METRICS_PORT "
                     "set there?)\n",
                     endpoint.str().c_str(), timeout);
        return 2;
    }
    if (json) std::printf("%s\n", views.dump(1).c_str());
    else std::printf("%s", views.empty() ? "no communicator in that process\n" : hostccl::monitor::jobText(views).c_str());
    return anythingFound(views) ? 1 : 0;
}
