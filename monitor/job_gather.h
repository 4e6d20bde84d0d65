// The endpoint's /job.json: for every communicator of this process, the status of
// every process holding one of its ranks (their endpoints are in the bootstrap
// table: PeerInfo::metricsPort), fetched at once and put together by jobView().
// This process's own ranks come from its snapshots, not over HTTP.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <vector>

#include "monitor/diagnosis.h"
#include "core/metrics/snapshot.h"

namespace hostccl::monitor {

nlohmann::json gatherJob(const std::vector<CommSnapshot>& local, const std::vector<Finding>& localFindings,
                         std::chrono::milliseconds limit);

// The view of communicator `s` from the processes' /status.json answers: a rank's entry
// counts only from the process the bootstrap table names for it (comm id, rank, pid and
// host), and a process's findings only when it holds one of the communicator's ranks.
// A process of another job that holds a peer's endpoint now never answers for it.
nlohmann::json viewFromAnswers(const CommSnapshot& s, const std::vector<nlohmann::json>& answers);

}  // namespace hostccl::monitor
