#include "monitor/prometheus.h"

#include <fmt/format.h>

#include <cctype>
#include <functional>

namespace hostccl::monitor {

std::string escapeLabel(const std::string& v) {
    std::string out;
    out.reserve(v.size());
    for (char c : v) {
        if (c == '\\') out += "\\\\";
        else if (c == '"') out += "\\\"";
        else if (c == '\n') out += "\\n";
        else out += c;
    }
    return out;
}

namespace {

std::string number(double v) {
    if (v >= 0 && v < 1e18 && v == double(uint64_t(v))) return fmt::format("{}", uint64_t(v));
    return fmt::format("{:.9g}", v);
}

std::string lowerName(CollType t) {
    std::string s = collName(t);
    for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

// Builds the text one family at a time: HELP and TYPE once, then every sample.
class Exposition {
public:
    void family(const char* name, const char* type, const char* help) {
        out_ += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, help, name, type);
    }
    void sample(const std::string& name, const std::string& labels, double v) {
        out_ += fmt::format("{}{{{}}} {}\n", name, labels, number(v));
    }
    std::string take() { return std::move(out_); }

private:
    std::string out_;
};

std::string commLabels(const CommSnapshot& s) {
    return fmt::format(R"(comm="{}",rank="{}")", escapeLabel(s.comm), s.rank);
}
std::string peerLabels(const CommSnapshot& s, uint32_t peer) {
    return fmt::format(R"({},peer="{}")", commLabels(s), peer);
}

void collectives(Exposition& x, const std::vector<CommSnapshot>& snaps) {
    using Field = std::function<double(const OpTypeSnapshot&)>;
    const struct {
        const char* name;
        const char* help;
        Field field;
    } counters[] = {
        {"hostccl_collective_ops_total", "Operations run, by collective.", [](auto& o) { return double(o.ops); }},
        {"hostccl_collective_failed_total", "Operations that returned an error.", [](auto& o) { return double(o.failed); }},
        {"hostccl_collective_bytes_total", "Bytes the operations covered (the op's size per rank).",
         [](auto& o) { return double(o.bytes); }},
    };
    for (const auto& c : counters) {
        x.family(c.name, "counter", c.help);
        for (const CommSnapshot& s : snaps)
            for (const OpTypeSnapshot& o : s.ops)
                x.sample(c.name, fmt::format(R"({},op="{}")", commLabels(s), lowerName(o.type)), c.field(o));
    }
    const char* h = "hostccl_collective_duration_seconds";
    x.family(h, "histogram", "Time from an operation's start on its stream to its end.");
    for (const CommSnapshot& s : snaps) {
        for (const OpTypeSnapshot& o : s.ops) {
            const std::string labels = fmt::format(R"({},op="{}")", commLabels(s), lowerName(o.type));
            uint64_t cumulative = 0;
            for (size_t b = 0; b < kDurationBuckets; ++b) {
                cumulative += o.buckets[b];
                const std::string le = b < kDurationBounds.size() ? fmt::format("{}", kDurationBounds[b]) : "+Inf";
                x.sample(std::string(h) + "_bucket", fmt::format(R"({},le="{}")", labels, le), double(cumulative));
            }
            x.sample(std::string(h) + "_sum", labels, double(o.durationUs) * 1e-6);
            x.sample(std::string(h) + "_count", labels, double(o.ops));
        }
    }
}

void progress(Exposition& x, const std::vector<CommSnapshot>& snaps) {
    x.family("hostccl_collective_sequence", "gauge", "Sequence number of the last collective started.");
    for (const CommSnapshot& s : snaps) x.sample("hostccl_collective_sequence", commLabels(s), double(s.lastSeq));
    x.family("hostccl_ops_in_flight", "gauge", "Operations enqueued and not finished.");
    for (const CommSnapshot& s : snaps) x.sample("hostccl_ops_in_flight", commLabels(s), double(s.inflight));
    x.family("hostccl_op_running_seconds", "gauge", "How long the operation running now has run (0: none runs).");
    for (const CommSnapshot& s : snaps)
        x.sample("hostccl_op_running_seconds", commLabels(s),
                 s.running.running ? double(std::max<int64_t>(0, s.takenUs - s.running.startedUs)) * 1e-6 : 0);
    x.family("hostccl_comm_failed", "gauge", "1 once the communicator has failed.");
    for (const CommSnapshot& s : snaps) x.sample("hostccl_comm_failed", commLabels(s), s.failed ? 1 : 0);
}

void arrivals(Exposition& x, const std::vector<CommSnapshot>& snaps) {
    x.family("hostccl_arrival_wait_seconds_total", "counter",
             "Time this rank waited at the start of collectives for the peer that arrived last.");
    for (const CommSnapshot& s : snaps)
        for (const WaitSnapshot& w : s.waits)
            x.sample("hostccl_arrival_wait_seconds_total", peerLabels(s, w.peer), double(w.waitedUs) * 1e-6);
    x.family("hostccl_arrival_waits_total", "counter", "Collectives at whose start this rank waited for the peer.");
    for (const CommSnapshot& s : snaps)
        for (const WaitSnapshot& w : s.waits) x.sample("hostccl_arrival_waits_total", peerLabels(s, w.peer), double(w.times));
    x.family("hostccl_arrival_late_total", "counter", "Of those, waits longer than HOSTCCL_STRAGGLER_MS.");
    for (const CommSnapshot& s : snaps)
        for (const WaitSnapshot& w : s.waits) x.sample("hostccl_arrival_late_total", peerLabels(s, w.peer), double(w.late));
}

void links(Exposition& x, const std::vector<CommSnapshot>& snaps) {
    using Field = std::function<double(const LinkSnapshot&)>;
    const struct {
        const char* name;
        const char* type;
        const char* help;
        Field field;
    } families[] = {
        {"hostccl_link_sent_bytes_total", "counter", "Bytes sent to the peer.", [](auto& l) { return double(l.sentBytes); }},
        {"hostccl_link_received_bytes_total", "counter", "Bytes received from the peer.",
         [](auto& l) { return double(l.receivedBytes); }},
        {"hostccl_link_sent_messages_total", "counter", "Messages sent to the peer.", [](auto& l) { return double(l.sends); }},
        {"hostccl_link_received_messages_total", "counter", "Messages received from the peer.",
         [](auto& l) { return double(l.receives); }},
        {"hostccl_link_timed_bytes_total", "counter",
         "Bytes of bulk receives (1 MiB and more, network links) timed from first byte to last.",
         [](auto& l) { return double(l.timedBytes); }},
        {"hostccl_link_timed_seconds_total", "counter", "Time those receives took: their rate is the link's.",
         [](auto& l) { return double(l.timedNs) * 1e-9; }},
        {"hostccl_link_expected_bytes_per_second", "gauge", "The cost model's rate for one flow over the link's class.",
         [](auto& l) { return l.expectedBytesPerSec; }},
        {"hostccl_link_round_trip_seconds", "gauge", "The kernel's smoothed round-trip time of the link (TCP; -1: none).",
         [](auto& l) { return l.roundTripUs >= 0 ? l.roundTripUs * 1e-6 : -1.0; }},
        {"hostccl_link_expected_latency_seconds", "gauge", "The cost model's start-up time (alpha) for the link's class.",
         [](auto& l) { return l.expectedLatencyUs * 1e-6; }},
    };
    for (const auto& f : families) {
        x.family(f.name, f.type, f.help);
        for (const CommSnapshot& s : snaps)
            for (const LinkSnapshot& l : s.links)
                x.sample(f.name, fmt::format(R"({},transport="{}")", peerLabels(s, l.peer), l.kind), f.field(l));
    }
}

void diagnoses(Exposition& x, const std::vector<Finding>& findings) {
    const struct {
        Finding::Kind kind;
        const char* name;
        const char* help;
    } families[] = {
        {Finding::Kind::Straggler, "hostccl_straggler_wait_seconds",
         "A peer found to be a straggler by this rank: the median of its late arrivals."},
        {Finding::Kind::SlowLink, "hostccl_slow_link_bytes_per_second",
         "A link from the peer found slow by this rank: the rate it achieved."},
        {Finding::Kind::Stuck, "hostccl_stuck_seconds",
         "A collective that has moved nothing for this long; peer is the one its wait sleeps on (-1: unknown)."},
    };
    for (const auto& fam : families) {
        x.family(fam.name, "gauge", fam.help);
        for (const Finding& f : findings) {
            if (f.kind != fam.kind) continue;
            const double v = f.kind == Finding::Kind::Straggler ? f.value / 1000
                             : f.kind == Finding::Kind::SlowLink ? f.value * 1e9
                                                                  : f.value;
            x.sample(fam.name, fmt::format(R"(comm="{}",rank="{}",peer="{}")", escapeLabel(f.comm), f.rank, f.peer), v);
        }
    }
}

}  // namespace

std::string renderPrometheus(const std::vector<CommSnapshot>& snaps, const std::vector<Finding>& findings) {
    Exposition x;
    collectives(x, snaps);
    progress(x, snaps);
    arrivals(x, snaps);
    links(x, snaps);
    diagnoses(x, findings);
    return x.take();
}

}  // namespace hostccl::monitor
