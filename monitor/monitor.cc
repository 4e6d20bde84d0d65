#include "monitor/monitor.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <mutex>
#include <thread>

#include "common/detached_thread.h"
#include "common/env.h"
#include "common/log.h"
#include "common/thread_name.h"
#include "core/flight_recorder.h"
#include "monitor/dashboard_page.h"
#include "monitor/http_server.h"
#include "monitor/job_gather.h"
#include "monitor/prometheus.h"
#include "core/metrics/snapshot.h"
#include "monitor/status_json.h"

namespace hostccl::monitor {

namespace {
// How long /job.json waits for the other processes' status (the endpoint serves
// nothing else meanwhile).
constexpr auto kJobFetchLimit = std::chrono::milliseconds(2000);

struct State {
    std::mutex mutex;  // guards findings
    std::vector<Finding> findings;
    std::unique_ptr<HttpServer> server;
    uint16_t port = 0;
};

std::mutex gStartMutex;
State* gState = nullptr;  // lives for the process, like its thread
pid_t gOwner = 0;

std::vector<Finding> findingsOf(State& st) {
    std::lock_guard<std::mutex> lock(st.mutex);
    return st.findings;
}

HttpResponse handle(State& st, const std::string& path) {
    if (path == "/metrics")
        return {200, "text/plain; version=0.0.4; charset=utf-8", renderPrometheus(snapshotAll(), findingsOf(st))};
    if (path == "/status.json") {
        nlohmann::json j = statusJson(snapshotAll(), findingsOf(st));
        j["metrics_port"] = st.port;
        return {200, "application/json", j.dump(1) + "\n"};
    }
    if (path == "/favicon.ico") return {204, "text/plain", ""};
    if (path == "/" || path == "/index.html") return {200, "text/html; charset=utf-8", dashboardPage()};
    if (path == "/job.json")
        return {200, "application/json", gatherJob(snapshotAll(), findingsOf(st), kJobFetchLimit).dump(1) + "\n"};
    return {404, "text/plain; charset=utf-8", "not found; this endpoint serves /, /metrics, /status.json and /job.json\n"};
}

// Written beside, then renamed: a collector never reads half a file.
void writeFile(const std::string& pattern, const std::string& text) {
    std::string path = pattern;
    const size_t p = path.find("%p");
    if (p != std::string::npos) path.replace(p, 2, std::to_string(::getpid()));
    const std::string tmp = path + ".tmp";
    {
        std::ofstream out(tmp);
        out << text;
        if (!out) {
            log::error("monitor: cannot write {}", tmp);
            return;
        }
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) log::error("monitor: cannot rename {} to {}", tmp, path);
}

void logChanges(const Diagnosis& d) {
    for (const Finding& f : d.appeared()) log::diagnosisLogger().warn("{} (seen by rank {})", f.text, f.rank);
    for (const Finding& f : d.cleared())
        log::diagnosisLogger().info("cleared: {} (no longer seen by rank {})", f.text, f.rank);
}

void run(State* st) {
    nameThisThread("hccl-monitor");
    using Clock = std::chrono::steady_clock;
    const auto interval = std::chrono::milliseconds(env::getInt("HOSTCCL_METRICS_INTERVAL_MS", 10, 3600 * 1000));
    const bool diagnose = env::getBool("HOSTCCL_DIAGNOSE");
    const std::string file = env::getString("HOSTCCL_METRICS_FILE");
    DiagnosisSettings settings;
    settings.stuckSeconds = double(env::getInt("HOSTCCL_STUCK_SECONDS", 1, 86400));
    Diagnosis diagnosis(settings);
    auto next = Clock::now() + interval;
    for (;;) {
        const auto now = Clock::now();
        if (now < next) {
            const int ms = int(std::chrono::duration_cast<std::chrono::milliseconds>(next - now).count()) + 1;
            if (st->server) st->server->serve(ms, [st](const std::string& path) { return handle(*st, path); });
            else std::this_thread::sleep_for(next - now);
            continue;
        }
        next = now + interval;
        const std::vector<CommSnapshot> snaps = snapshotAll();
        std::vector<Finding> findings = diagnosis.update(snaps, FlightRecorder::wallUs());
        if (diagnose) logChanges(diagnosis);
        if (!file.empty()) writeFile(file, renderPrometheus(snaps, findings));
        std::lock_guard<std::mutex> lock(st->mutex);
        st->findings = std::move(findings);
    }
}

// HOSTCCL_METRICS_PORT: the endpoint, or null when it is not asked for or cannot listen.
std::unique_ptr<HttpServer> listenIfAsked() {
    if (!env::raw("HOSTCCL_METRICS_PORT")) return nullptr;
    const auto port = uint16_t(env::getInt("HOSTCCL_METRICS_PORT", 0, 65535));
    const std::string addr = env::getString("HOSTCCL_METRICS_ADDR");
    std::string why;
    auto server = HttpServer::listen(addr, port, kMetricsPortTries, &why);
    if (!server) {
        log::error("monitor: no metrics endpoint on {} ports {}..{}: {}", addr, port, port + kMetricsPortTries - 1, why);
        return nullptr;
    }
    log::info("monitor: metrics endpoint on {}:{} (/metrics, /status.json)", addr, server->port());
    return server;
}
}  // namespace

void startProcessMonitor() {
    if (!enabled()) return;
    std::lock_guard<std::mutex> lock(gStartMutex);
    if (gState != nullptr && gOwner == ::getpid()) return;
    gOwner = ::getpid();
    gState = new State;
    gState->server = listenIfAsked();
    gState->port = gState->server ? gState->server->port() : 0;
    State* st = gState;
    startDetached([st] { run(st); });
}

uint16_t processEndpointPort() {
    std::lock_guard<std::mutex> lock(gStartMutex);
    return gState != nullptr && gOwner == ::getpid() ? gState->port : 0;
}

bool install() {
    installHooks({startProcessMonitor, processEndpointPort});
    return true;
}

}  // namespace hostccl::monitor
