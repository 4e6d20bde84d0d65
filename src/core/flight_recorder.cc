#include "core/flight_recorder.h"

#include <signal.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>

#include "common/coll_type.h"
#include "common/datatype.h"
#include "common/env.h"
#include "common/error.h"
#include "common/log.h"
#include "core/health/health_monitor.h"

namespace hostccl {

namespace {
int64_t wallUs() {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

const char* stateName(int s) {
    static const char* names[] = {"queued", "running", "done", "failed"};
    return names[s];
}

uint64_t countOf(const CollArgs& a) {
    if (!isVariable(a.type)) return a.count;
    uint64_t sum = 0;
    for (uint64_t c : a.sendCounts) sum += c;
    return sum;
}

std::atomic<bool> gDumpRequested{false};
void onSigusr1(int) { gDumpRequested.store(true); }
}  // namespace

std::unique_ptr<FlightRecorder> FlightRecorder::fromEnv() {
    int64_t size = env::getInt("HOSTCCL_FLIGHT_RECORDER_SIZE", 0, 1 << 20);
    if (size == 0) return nullptr;
    return std::make_unique<FlightRecorder>(size_t(size));
}

FlightRecorder::FlightRecorder(size_t capacity) : ring_(capacity) {}

uint64_t FlightRecorder::queued(const CollArgs& a) {
    std::lock_guard<std::mutex> lock(mutex_);
    uint64_t id = next_++;
    Entry& e = ring_[id % ring_.size()];
    e = Entry{};
    e.id = id;
    e.type = a.type;
    e.dtype = a.dtype;
    e.op = a.op;
    e.root = a.root;
    e.peer = a.peer;
    e.anySource = a.anySource != nullptr;
    e.count = countOf(a);
    e.queuedUs = wallUs();
    return id;
}

FlightRecorder::Entry* FlightRecorder::find(uint64_t id) {
    Entry& e = ring_[id % ring_.size()];
    return e.id == id ? &e : nullptr;
}

void FlightRecorder::started(uint64_t id, uint64_t seq) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (Entry* e = find(id)) {
        e->seq = seq;
        e->state = State::Running;
        e->startedUs = wallUs();
    }
}

void FlightRecorder::ended(uint64_t id, HcclResult rc, const char* algorithm, int64_t culprit) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (Entry* e = find(id)) {
        e->state = rc == HCCL_SUCCESS ? State::Done : State::Failed;
        e->result = rc;
        e->algorithm = algorithm;
        e->culprit = culprit;
        e->endedUs = wallUs();
    }
}

std::string FlightRecorder::json(const Identity& who, const std::string& reason, HcclResult code, int64_t culprit,
                                 const std::string& failure) const {
    nlohmann::json doc = {{"comm", who.comm},        {"comm_id", fmt::format("{:016x}", who.commId)},
                          {"rank", who.rank},        {"size", who.size},
                          {"host", who.host},        {"pid", who.pid},
                          {"reason", reason},        {"dumped_at_us", wallUs()},
                          {"failure", {{"code", resultName(code)}, {"rank", culprit}, {"text", failure}}}};
    nlohmann::json ops = nlohmann::json::array();
    std::lock_guard<std::mutex> lock(mutex_);
    const uint64_t first = next_ > ring_.size() ? next_ - ring_.size() : 1;
    for (uint64_t id = first; id < next_; ++id) {
        const Entry& e = ring_[id % ring_.size()];
        nlohmann::json op = {{"id", e.id},
                             {"seq", e.seq},
                             {"op", collName(e.type)},
                             {"dtype", dtypeName(e.dtype)},
                             {"count", e.count},
                             {"state", stateName(int(e.state))},
                             {"queued_us", e.queuedUs}};
        if (isReduction(e.type)) op["redop"] = reduceOpName(e.op);
        if (hasRoot(e.type)) op["root"] = e.root;
        if (isPointToPoint(e.type)) op["peer"] = e.anySource ? nlohmann::json("any") : nlohmann::json(e.peer);
        if (e.startedUs != 0) op["started_us"] = e.startedUs;
        if (e.endedUs != 0) {
            op["ended_us"] = e.endedUs;
            op["algorithm"] = e.algorithm;
            op["result"] = resultName(e.result);
        }
        if (e.culprit >= 0) op["blamed_rank"] = e.culprit;
        ops.push_back(std::move(op));
    }
    doc["ops"] = std::move(ops);
    return doc.dump(1);
}

std::string FlightRecorder::dump(const Identity& who, const std::string& reason, HcclResult code, int64_t culprit,
                                 const std::string& failure) const {
    std::string dir = env::getString("HOSTCCL_FLIGHT_RECORDER_DIR");
    if (dir.empty()) return "";
    std::string path = fmt::format("{}/hostccl-flight.{}.rank{}.json", dir, who.comm, who.rank);
    std::string tmp = path + ".tmp";
    {
        std::ofstream out(tmp);
        out << json(who, reason, code, culprit, failure) << "\n";
        if (!out) {
            log::error("flight recorder: cannot write {}", tmp);
            return "";
        }
    }
    if (std::rename(tmp.c_str(), path.c_str()) != 0) {
        log::error("flight recorder: cannot rename {} to {}", tmp, path);
        return "";
    }
    log::warn("comm {} rank {}: flight recorder ({}) written to {}", who.comm, who.rank, reason, path);
    return path;
}

void installFlightRecorderSignal() {
    static std::once_flag once;
    std::call_once(once, [] {
        if (env::getString("HOSTCCL_FLIGHT_RECORDER_DIR").empty()) return;
        struct sigaction old {};
        if (sigaction(SIGUSR1, nullptr, &old) != 0 || old.sa_handler != SIG_DFL) return;  // the program's own
        struct sigaction sa {};
        sa.sa_handler = onSigusr1;
        sigemptyset(&sa.sa_mask);
        sa.sa_flags = SA_RESTART;
        sigaction(SIGUSR1, &sa, nullptr);
        health::HealthMonitor::instance();  // its thread serves the request
    });
}

bool takeFlightRecorderRequest() { return gDumpRequested.exchange(false); }

}  // namespace hostccl
