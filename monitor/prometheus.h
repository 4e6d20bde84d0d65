// The Prometheus text exposition format (0.0.4) of this process's snapshots and
// findings: one `# HELP` and `# TYPE` per family, base units (seconds, bytes),
// counters ending in `_total`, durations as cumulative `_bucket{le=...}` histograms.
// Labels name the communicator, the rank and, where it matters, the peer, the
// collective or the transport; nothing is labelled per op.
#pragma once

#include <string>
#include <vector>

#include "monitor/diagnosis.h"
#include "core/metrics/snapshot.h"

namespace hostccl::monitor {

std::string renderPrometheus(const std::vector<CommSnapshot>& snaps, const std::vector<Finding>& findings);

// A label value with `\`, `"` and newlines escaped as the format requires.
std::string escapeLabel(const std::string& v);

}  // namespace hostccl::monitor
