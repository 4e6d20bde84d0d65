// The endpoint's /job.json: for every communicator of this process, the status of
// every process holding one of its ranks (their endpoints are in the bootstrap
// table: PeerInfo::metricsPort), fetched at once and put together by jobView().
// This process's own ranks come from its snapshots, not over HTTP.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/monitor/diagnosis.h"
#include "core/monitor/snapshot.h"

namespace hostccl::monitor {

nlohmann::json gatherJob(const std::vector<CommSnapshot>& local, const std::vector<Finding>& localFindings,
                         std::chrono::milliseconds limit);

}  // namespace hostccl::monitor
