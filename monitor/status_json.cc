#include "monitor/status_json.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>

namespace hostccl::monitor {

namespace {
using nlohmann::json;

json opsJson(const CommSnapshot& s) {
    json ops = json::array();
    for (const OpTypeSnapshot& o : s.ops) {
        json buckets = json::array();
        for (uint64_t b : o.buckets) buckets.push_back(b);
        ops.push_back({{"op", collName(o.type)},
                       {"count", o.ops},
                       {"failed", o.failed},
                       {"bytes", o.bytes},
                       {"seconds", double(o.durationUs) * 1e-6},
                       {"duration_buckets", std::move(buckets)}});
    }
    return ops;
}

json runningJson(const CommSnapshot& s) {
    const CommMetrics::Running& r = s.running;
    if (!r.running) return nullptr;
    json j = {{"op", collName(r.type)},
              {"seq", r.seq},
              {"seconds", double(std::max<int64_t>(0, s.takenUs - r.startedUs)) * 1e-6}};
    if (r.waitingOn >= 0) j["waiting_on"] = {{"rank", r.waitingOn}, {"who", s.waitingOnWho}};
    return j;
}

json waitsJson(const CommSnapshot& s) {
    json out = json::array();
    for (const WaitSnapshot& w : s.waits)
        out.push_back({{"peer", w.peer}, {"who", w.who}, {"times", w.times}, {"seconds", double(w.waitedUs) * 1e-6},
                       {"late", w.late}});
    return out;
}

json linksJson(const CommSnapshot& s) {
    json out = json::array();
    for (const LinkSnapshot& l : s.links) {
        json j = {{"peer", l.peer},
                  {"who", l.who},
                  {"transport", l.kind},
                  {"sent_bytes", l.sentBytes},
                  {"received_bytes", l.receivedBytes},
                  {"sent_messages", l.sends},
                  {"received_messages", l.receives},
                  {"timed_bytes", l.timedBytes},
                  {"timed_seconds", double(l.timedNs) * 1e-9},
                  {"expected_bytes_per_second", l.expectedBytesPerSec},
                  {"expected_latency_seconds", l.expectedLatencyUs * 1e-6}};
        j["round_trip_seconds"] = l.roundTripUs >= 0 ? json(l.roundTripUs * 1e-6) : json(nullptr);
        j["bytes_per_second"] = l.timedNs > 0 ? json(double(l.timedBytes) / double(l.timedNs) * 1e9) : json(nullptr);
        out.push_back(std::move(j));
    }
    return out;
}

json recentJson(const CommSnapshot& s) {
    json out = json::array();
    for (const RecentOp& op : s.recent)
        out.push_back({{"seq", op.seq}, {"late_peer", op.latePeer}, {"waited_seconds", double(op.waitedUs) * 1e-6}});
    return out;
}
}  // namespace

json findingJson(const Finding& f) {
    return {{"kind", kindName(f.kind)},
            {"comm", f.comm},
            {"comm_id", fmt::format("{:016x}", f.commId)},
            {"rank", f.rank},
            {"peer", f.peer},
            {"who", f.who},
            {"value", f.value},
            {"reference", f.reference},
            {"text", f.text}};
}

json statusJson(const std::vector<CommSnapshot>& snaps, const std::vector<Finding>& findings) {
    json comms = json::array();
    for (const CommSnapshot& s : snaps) {
        comms.push_back({{"comm", s.comm},
                         {"comm_id", fmt::format("{:016x}", s.commId)},
                         {"rank", s.rank},
                         {"size", s.size},
                         {"host", s.host},
                         {"pid", s.pid},
                         {"taken_us", s.takenUs},
                         {"last_seq", s.lastSeq},
                         {"in_flight", s.inflight},
                         {"failed", s.failed},
                         {"running", runningJson(s)},
                         {"collectives", opsJson(s)},
                         {"arrival_waits", waitsJson(s)},
                         {"links", linksJson(s)},
                         {"recent", recentJson(s)},
                         {"straggler_threshold_seconds", double(s.lateUs) * 1e-6}});
    }
    json found = json::array();
    for (const Finding& f : findings) found.push_back(findingJson(f));
    return {{"pid", ::getpid()}, {"communicators", std::move(comms)}, {"findings", std::move(found)}};
}

}  // namespace hostccl::monitor
