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

int64_t FlightRecorder::wallUs() {
    return std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::system_clock::now().time_since_epoch())
        .count();
}

namespace {

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

FlightRecorder::FlightRecorder(size_t capacity) : ring_(capacity), progress_(capacity) {}

uint64_t FlightRecorder::queued(const CollArgs& a) {
    std::lock_guard<std::mutex> lock(queuedMutex_);
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

FlightRecorder::Progress* FlightRecorder::progressOf(uint64_t id) {
    Progress& p = progress_[id % progress_.size()];
    return p.id == id ? &p : nullptr;
}

void FlightRecorder::started(uint64_t id, uint64_t seq, int64_t nowUs) {
    std::lock_guard<std::mutex> lock(progressMutex_);
    Progress& p = progress_[id % progress_.size()];
    if (p.id > id) return;  // a later op (another stream's) already has the slot
    p = Progress{};
    p.id = id;
    p.seq = seq;
    p.state = State::Running;
    p.startedUs = nowUs;
}

void FlightRecorder::ended(uint64_t id, HcclResult rc, const char* algorithm, int64_t culprit, int64_t nowUs) {
    std::lock_guard<std::mutex> lock(progressMutex_);
    if (Progress* e = progressOf(id)) {
        e->state = rc == HCCL_SUCCESS ? State::Done : State::Failed;
        e->result = rc;
        e->algorithm = algorithm;
        e->culprit = culprit;
        e->endedUs = nowUs;
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
    std::lock_guard<std::mutex> queuedLock(queuedMutex_);
    std::lock_guard<std::mutex> progressLock(progressMutex_);
    const uint64_t first = next_ > ring_.size() ? next_ - ring_.size() : 1;
    for (uint64_t id = first; id < next_; ++id) {
        const Entry& q = ring_[id % ring_.size()];
        const Progress& p = progress_[id % progress_.size()];
        const Progress e = p.id == id ? p : Progress{};  // not started yet
        nlohmann::json op = {{"id", q.id},
                             {"seq", e.seq},
                             {"op", collName(q.type)},
                             {"dtype", dtypeName(q.dtype)},
                             {"count", q.count},
                             {"state", stateName(int(e.state))},
                             {"queued_us", q.queuedUs}};
        if (isReduction(q.type)) op["redop"] = reduceOpName(q.op);
        if (hasRoot(q.type)) op["root"] = q.root;
        if (isPointToPoint(q.type)) op["peer"] = q.anySource ? nlohmann::json("any") : nlohmann::json(q.peer);
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
