#include "core/flight_recorder.h"

#include <signal.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
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
// When an op was queued, to the kernel's tick: the caller's thread pays a few
// nanoseconds for it instead of a full clock read (34 ns on the 2-core Debian 12 test VM).
int64_t coarseWallUs() {
    timespec t;
    clock_gettime(CLOCK_REALTIME_COARSE, &t);
    return int64_t(t.tv_sec) * 1000000 + t.tv_nsec / 1000;
}
}  // namespace

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

namespace {
size_t powerOfTwoAtLeast(size_t n) {
    size_t p = 1;
    while (p < n) p <<= 1;
    return p;
}
}  // namespace

FlightRecorder::FlightRecorder(size_t capacity)
    : capacity_(capacity),
      mask_(powerOfTwoAtLeast(capacity) - 1),
      ring_(mask_ + 1),
      progress_(mask_ + 1) {}

template <class T>
void FlightRecorder::Slot<T>::write(uint64_t tag, const T& value) {
    tag_.store(0, std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_release);  // the cleared tag before any word
    uint64_t words[kWords] = {};
    std::memcpy(words, &value, sizeof value);
    for (size_t i = 0; i < kWords; ++i) words_[i].store(words[i], std::memory_order_relaxed);
    tag_.store(tag, std::memory_order_release);
}

template <class T>
bool FlightRecorder::Slot<T>::read(uint64_t tag, T* out) const {
    if (tag_.load(std::memory_order_acquire) != tag) return false;
    uint64_t words[kWords];
    for (size_t i = 0; i < kWords; ++i) words[i] = words_[i].load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);  // every word before the second look
    if (tag_.load(std::memory_order_relaxed) != tag) return false;
    std::memcpy(out, words, sizeof *out);
    return true;
}

uint64_t FlightRecorder::queued(const CollArgs& a) {
    const uint64_t id = next_.fetch_add(1, std::memory_order_relaxed);
    Entry e;
    e.type = uint64_t(a.type);
    e.dtype = a.dtype;
    e.op = a.op;
    e.root = a.root;
    e.peer = a.peer;
    e.anySource = a.anySource != nullptr;
    e.count = countOf(a);
    e.queuedUs = coarseWallUs();
    ring_[index(id)].write(id, e);
    return id;
}

// The ops of one communicator run one at a time (Comm::execute), so one thread at a
// time writes progress; an op whose slot a later op already took leaves it alone.
void FlightRecorder::started(uint64_t id, uint64_t seq, int64_t nowUs) {
    Slot<Progress>& slot = progress_[index(id)];
    if (slot.tag() > id) return;
    running_ = Progress{};
    running_.seq = seq;
    running_.state = State::Running;
    running_.startedUs = nowUs;
    runningId_ = id;
    slot.write(id, running_);
}

void FlightRecorder::ended(uint64_t id, HcclResult rc, const char* algorithm, int64_t culprit, int64_t nowUs) {
    Slot<Progress>& slot = progress_[index(id)];
    if (runningId_ != id || slot.tag() != id) return;  // never started here, or its slot taken since
    running_.state = rc == HCCL_SUCCESS ? State::Done : State::Failed;
    running_.result = rc;
    running_.algorithm = algorithm;
    running_.culprit = culprit;
    running_.endedUs = nowUs;
    slot.write(id, running_);
}

std::string FlightRecorder::json(const Identity& who, const std::string& reason, HcclResult code, int64_t culprit,
                                 const std::string& failure) const {
    nlohmann::json doc = {{"comm", who.comm},        {"comm_id", fmt::format("{:016x}", who.commId)},
                          {"rank", who.rank},        {"size", who.size},
                          {"host", who.host},        {"pid", who.pid},
                          {"reason", reason},        {"dumped_at_us", wallUs()},
                          {"failure", {{"code", resultName(code)}, {"rank", culprit}, {"text", failure}}}};
    nlohmann::json ops = nlohmann::json::array();
    const uint64_t next = next_.load(std::memory_order_acquire);
    const uint64_t first = next > capacity_ ? next - capacity_ : 1;
    for (uint64_t id = first; id < next; ++id) {
        Entry q;
        // An entry being written (its op queued this instant) or already reused is left
        // out: the dump shows what was settled when it looked.
        if (!ring_[index(id)].read(id, &q)) continue;
        Progress e;  // not started yet unless read
        if (!progress_[index(id)].read(id, &e)) e = Progress{};
        const CollType type = CollType(q.type);
        nlohmann::json op = {{"id", id},
                             {"seq", e.seq},
                             {"op", collName(type)},
                             {"dtype", dtypeName(HcclDataType(q.dtype))},
                             {"count", q.count},
                             {"state", stateName(int(e.state))},
                             {"queued_us", q.queuedUs}};
        if (isReduction(type)) op["redop"] = reduceOpName(HcclReduceOp(q.op));
        if (hasRoot(type)) op["root"] = q.root;
        if (isPointToPoint(type)) op["peer"] = q.anySource ? nlohmann::json("any") : nlohmann::json(q.peer);
        if (e.startedUs != 0) op["started_us"] = e.startedUs;
        if (e.endedUs != 0) {
            op["ended_us"] = e.endedUs;
            op["algorithm"] = e.algorithm;
            op["result"] = resultName(HcclResult(e.result));
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
