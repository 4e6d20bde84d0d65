// Starts N worker processes and waits for all of them with a deadline; a job
// that overruns is killed and reported, never left hanging.
#pragma once

#include <string>
#include <vector>

namespace hostccl::test {

struct ProcessResult {
    int exitCode = -1;  // -1 when killed by a signal or by the deadline
    bool timedOut = false;
};

// `linger[i]`: process i may never exit by itself (a stopped rank); it is killed once
// every other process has exited.
std::vector<ProcessResult> runProcesses(const std::vector<std::vector<std::string>>& argvs, int timeoutSec,
                                        const std::vector<bool>& linger = {});
std::string tempPath(const std::string& stem);
uint16_t freeTcpPort();

}  // namespace hostccl::test
