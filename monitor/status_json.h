// This process's communicators and findings as JSON (the endpoint's /status.json,
// what hostccl-status and the dashboard read): per communicator its ranks'
// progress, collectives, arrival waits and links, with rates already worked out.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "monitor/diagnosis.h"
#include "core/metrics/snapshot.h"

namespace hostccl::monitor {

nlohmann::json statusJson(const std::vector<CommSnapshot>& snaps, const std::vector<Finding>& findings);
nlohmann::json findingJson(const Finding& f);

}  // namespace hostccl::monitor
