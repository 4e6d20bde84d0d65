// The profiling session behind ACL's aclprof* calls (src/api/profiling_api.cc).
// While a session runs, every communicator of this process records its operators and
// transfer steps into a tracer of its own (common/trace/trace.h, the HOSTCCL_TRACE format);
// stopping writes one file per communicator under the directory aclprofInit named:
// <dir>/hostccl_prof.<comm>.rank<r>.<session>.json.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace hostccl {

class Comm;
class Tracer;

namespace profiling {

// aclprofInit: the directory results go to (created when missing).
bool setDirectory(const std::string& dir, std::string* why);
bool hasDirectory();
// aclprofStart / aclprofStop. `switches` (ACL_PROF_*) are noted in each file.
bool start(uint64_t switches, std::string* why);
bool running();
// Writes every communicator's trace of the session; returns the files written.
std::vector<std::string> stop();
// aclprofFinalize: stops a running session, forgets the directory.
void finalize();

// The tracer `comm`'s ops record into while a session runs; null otherwise. Shared:
// an op that began before aclprofStop keeps it alive to its end.
std::shared_ptr<Tracer> tracerFor(const Comm* comm);
// A communicator being destroyed: its trace is kept for stop() to write.
void detach(const Comm* comm);

}  // namespace profiling
}  // namespace hostccl
