// GETs one path from many monitoring endpoints at once (the endpoint's /job.json
// asks every process of a job; hostccl-status asks one): non-blocking sockets in
// one poll loop, at most 256 in flight, every one given up at the deadline.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "common/net/socket.h"

namespace hostccl::monitor {

// The body of each endpoint's answer, "" when it did not answer with 200 in time.
std::vector<std::string> fetchAll(const std::vector<net::Endpoint>& endpoints, const std::string& path,
                                  std::chrono::milliseconds limit);

}  // namespace hostccl::monitor
