// What the monitor concludes from successive snapshots of this process's
// communicators (docs/monitoring.md):
//   - straggler: a peer this rank waited for, past the threshold, at the first wait
//     of more than half of its recent collectives (at least 8 seen);
//   - slow link: a network link whose bulk receives, over a window of at least
//     16 MiB, moved below half of the cost model's rate for its class;
//   - stuck: a collective in flight that has moved nothing (same sequence number, no
//     bytes) for the stuck time, with the peer its wait sleeps on.
// Pure logic over snapshots: the thread that takes them calls update() and logs
// what appeared and what cleared.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "core/metrics/snapshot.h"

namespace hostccl::monitor {

struct Finding {
    enum class Kind { Straggler, SlowLink, Stuck };
    Kind kind = Kind::Straggler;
    std::string comm;
    uint64_t commId = 0;
    uint32_t rank = 0;  // the rank that saw it
    int64_t peer = -1;  // the rank it names (-1: none known)
    std::string who;    // that rank's name: "rank 3 (host h 10.0.0.2, pid 42)"
    double value = 0;   // straggler: median wait, ms; slow link: GB/s; stuck: seconds
    double reference = 0;  // straggler: late ops; slow link: the model's GB/s; stuck: sequence number
    std::string text;   // one sentence, as logged
};
const char* kindName(Finding::Kind k);  // "straggler", "slow_link", "stuck"

struct DiagnosisSettings {
    double stuckSeconds = 10;
    double slowRatio = 0.5;
    uint64_t slowWindowBytes = uint64_t(16) << 20;
    size_t minRecentOps = 8;
};

class Diagnosis {
public:
    explicit Diagnosis(DiagnosisSettings s) : settings_(s) {}
    // Judges the snapshots (taken at wall time `nowUs`) against what came before and
    // returns every finding that holds now.
    std::vector<Finding> update(const std::vector<CommSnapshot>& snaps, int64_t nowUs);
    // What changed in the last update: findings new in it, and those that ended.
    const std::vector<Finding>& appeared() const { return appeared_; }
    const std::vector<Finding>& cleared() const { return cleared_; }

private:
    using Key = std::tuple<int, uint64_t, uint32_t, int64_t>;  // kind, comm id, rank, peer
    struct LinkWindow {
        uint64_t bytes = 0, ns = 0;  // the counters where the window began
        bool slow = false;
        double rate = 0;
    };
    struct Progress {
        uint64_t seq = 0, progress = 0;
        bool running = false;
        int64_t sinceUs = 0;  // since when nothing changed
    };
    void straggler(const CommSnapshot& s, std::vector<Finding>* out) const;
    void slowLinks(const CommSnapshot& s, std::vector<Finding>* out);
    void stuck(const CommSnapshot& s, int64_t nowUs, std::vector<Finding>* out);
    void forgetGone(const std::vector<CommSnapshot>& snaps);

    DiagnosisSettings settings_;
    std::map<std::tuple<uint64_t, uint32_t, uint32_t>, LinkWindow> links_;
    std::map<std::pair<uint64_t, uint32_t>, Progress> progress_;
    std::map<Key, Finding> current_;
    std::vector<Finding> appeared_, cleared_;
};

}  // namespace hostccl::monitor
