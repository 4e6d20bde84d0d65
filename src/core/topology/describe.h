// A communicator described for people: its hosts (with hwloc's cores and NUMA
// nodes), which ranks each holds, the link kind between every pair, and the
// algorithm the selector picks per collective and size. HostcclCommDescribe and the
// perf tools' --topology print it.
#pragma once

#include <string>

namespace hostccl {

class Comm;

std::string describeCommunicator(const Comm& comm);

}  // namespace hostccl
