// HOSTCCL_TRACE=<prefix>: each communicator records its ops and their send/receive
// steps and writes them, when destroyed, to <prefix>.<comm>.rank<r>.json in the
// Chrome trace event format (chrome://tracing, ui.perfetto.dev). Timestamps are
// CLOCK_MONOTONIC microseconds, shared by every process on a host, so
// scripts/merge_traces.py can lay the ranks' files side by side.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace hostccl {

class Tracer {
public:
    // Null unless HOSTCCL_TRACE is set.
    static std::unique_ptr<Tracer> fromEnv(const std::string& comm, uint32_t rank, const std::string& host);
    // A tracer writing to `path`; `extra` (JSON members) joins the file's otherData.
    static std::unique_ptr<Tracer> toFile(std::string path, const std::string& comm, uint32_t rank,
                                          const std::string& host, std::string extra = "");
    // `name` reduced to characters safe in a file name.
    static std::string safeName(const std::string& name);

    using Clock = std::chrono::steady_clock;
    void op(const char* name, Clock::time_point start, Clock::time_point end, const std::string& args);
    void step(Clock::time_point start, Clock::time_point end, const std::string& args);
    // Writes the file; returns its path ("" on failure, which is logged).
    std::string flush();

private:
    Tracer(std::string path, std::string comm, uint32_t rank, std::string host, std::string extra);
    void add(const char* name, const char* cat, int tid, Clock::time_point start, Clock::time_point end,
             const std::string& args);

    static constexpr size_t kMaxEvents = 1000000;  // beyond this, events are counted, not kept
    const std::string path_, comm_;
    const uint32_t rank_;
    const std::string host_, extra_;
    std::mutex mutex_;
    std::vector<std::string> events_;
    uint64_t dropped_ = 0;
};

}  // namespace hostccl
