#include "common/trace/trace.h"

#include <fmt/format.h>

#include <fstream>
#include <memory>

#include "common/env.h"
#include "common/log.h"

namespace hostccl {

namespace {
int64_t micros(Tracer::Clock::time_point t) {
    return std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count();
}
std::string safe(const std::string& s) { return Tracer::safeName(s); }
}  // namespace

// Names become file names: keep them to a safe alphabet.
std::string Tracer::safeName(const std::string& name) {
    std::string out;
    for (char c : name) out += (std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_') ? c : '_';
    return out;
}

std::unique_ptr<Tracer> Tracer::toFile(std::string path, const std::string& comm, uint32_t rank,
                                       const std::string& host, std::string extra) {
    return std::unique_ptr<Tracer>(new Tracer(std::move(path), comm, rank, host, std::move(extra)));
}

std::unique_ptr<Tracer> Tracer::fromEnv(const std::string& comm, uint32_t rank, const std::string& host) {
    auto prefix = env::raw("HOSTCCL_TRACE");
    if (!prefix) return nullptr;
    std::string path = fmt::format("{}.{}.rank{}.json", *prefix, safe(comm), rank);
    return toFile(path, comm, rank, host);
}

Tracer::Tracer(std::string path, std::string comm, uint32_t rank, std::string host, std::string extra)
    : path_(std::move(path)), comm_(std::move(comm)), rank_(rank), host_(std::move(host)), extra_(std::move(extra)) {}

void Tracer::add(const char* name, const char* cat, int tid, Clock::time_point start, Clock::time_point end,
                 const std::string& args) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (events_.size() >= kMaxEvents) {
        ++dropped_;
        return;
    }
    events_.push_back(fmt::format(R"({{"name":"{}","cat":"{}","ph":"X","ts":{},"dur":{},"pid":{},"tid":{},"args":{{{}}}}})",
                                  name, cat, micros(start), micros(end) - micros(start), rank_, tid, args));
}

void Tracer::op(const char* name, Clock::time_point start, Clock::time_point end, const std::string& args) {
    add(name, "op", 0, start, end, args);
}

void Tracer::step(Clock::time_point start, Clock::time_point end, const std::string& args) {
    add("step", "transfer", 1, start, end, args);
}

std::string Tracer::flush() {
    std::lock_guard<std::mutex> lock(mutex_);
    std::ofstream out(path_);
    out << "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"comm\":\"" << comm_ << "\",\"dropped\":" << dropped_
        << (extra_.empty() ? "" : ",") << extra_ << "},\"traceEvents\":[\n";
    out << fmt::format(R"J({{"name":"process_name","ph":"M","pid":{},"args":{{"name":"rank {} ({})"}}}})J", rank_,
                       rank_, safe(host_));
    out << fmt::format(",\n" R"({{"name":"thread_name","ph":"M","pid":{},"tid":0,"args":{{"name":"ops"}}}})", rank_);
    out << fmt::format(",\n" R"({{"name":"thread_name","ph":"M","pid":{},"tid":1,"args":{{"name":"steps"}}}})", rank_);
    for (const std::string& e : events_) out << ",\n" << e;
    out << "\n]}\n";
    if (!out) {
        log::error("trace: cannot write {}", path_);
        return "";
    }
    log::info("trace: wrote {} events to {}", events_.size(), path_);
    return path_;
}

}  // namespace hostccl
