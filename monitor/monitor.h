// The process's live monitor (docs/monitoring.md): one thread that every
// HOSTCCL_METRICS_INTERVAL_MS snapshots every communicator, runs the diagnosis
// (logging what appears and what clears, HOSTCCL_DIAGNOSE), rewrites
// HOSTCCL_METRICS_FILE, and in between serves the HTTP endpoint when
// HOSTCCL_METRICS_PORT asks for one. Started with the process's first
// communicator; a failure to listen is logged and leaves the rest running.
#pragma once

#include <cstdint>
#include <vector>

#include "core/metrics/monitor_hooks.h"
#include "monitor/diagnosis.h"

namespace hostccl::monitor {

// A process's endpoint listens on the first free port of these from HOSTCCL_METRICS_PORT
// on: the processes of one host take consecutive ports.
constexpr int kMetricsPortTries = 64;

// Starts the thread and the endpoint once per process (again in a forked child);
// nothing when monitoring is off (HOSTCCL_MONITOR, core/metrics/monitor_hooks.h).
void startProcessMonitor();
// The endpoint's port, 0 when there is none (after startProcessMonitor).
uint16_t processEndpointPort();
// Hands the two above to the core (core/metrics/monitor_hooks.h), which starts the
// monitor with the process's first communicator. Always true.
bool install();

}  // namespace hostccl::monitor
