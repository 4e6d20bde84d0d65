#include "core/slurm_meeting_point.h"

#include "common/env.h"

namespace hostccl {

namespace {
bool parseU64(const std::string& s, uint64_t* out) {
    if (s.empty() || s.size() > 19 || s.find_first_not_of("0123456789") != std::string::npos) return false;
    *out = std::stoull(s);
    return true;
}
}  // namespace

std::string firstSlurmHost(const std::string& hostList) {
    // The first entry ends at the first comma outside brackets.
    size_t end = 0;
    int depth = 0;
    for (; end < hostList.size(); ++end) {
        const char c = hostList[end];
        if (c == '[') ++depth;
        if (c == ']' && --depth < 0) return "";
        if (c == ',' && depth == 0) break;
    }
    const std::string entry = hostList.substr(0, end);
    const size_t open = entry.find('[');
    if (open == std::string::npos) return depth == 0 ? entry : "";
    const size_t close = entry.find(']', open);
    if (close == std::string::npos || open == 0) return "";
    // The first number of the first range, its zero padding kept: "03-05,9" -> "03".
    const std::string ranges = entry.substr(open + 1, close - open - 1);
    const size_t digits = ranges.find_first_not_of("0123456789");
    const std::string first = ranges.substr(0, digits);
    if (first.empty() || (digits != std::string::npos && ranges[digits] != '-' && ranges[digits] != ',')) return "";
    return entry.substr(0, open) + first + entry.substr(close + 1);
}

uint16_t slurmStepPort(uint64_t jobId, uint64_t stepId) {
    // Jobs spread by 64 ports, so a job's first steps rarely meet another job's.
    return uint16_t(kSlurmFirstPort + (jobId * 64 + stepId) % kSlurmPortSpan);
}

bool slurmMeetingPoint(std::string* host, uint16_t* port, std::string* why) {
    std::string list = env::getString("SLURM_STEP_NODELIST");
    if (list.empty()) list = env::getString("SLURM_JOB_NODELIST");
    *host = firstSlurmHost(list);
    if (host->empty()) {
        *why = "no meeting point: Slurm gave no node list (SLURM_STEP_NODELIST='" + list +
               "'); set HOSTCCL_ROOT_ADDR=host:port";
        return false;
    }
    uint64_t reserved = 0;
    const std::string ports = env::getString("SLURM_STEP_RESV_PORTS");  // "12000-12003" or "12000,12005"
    if (!ports.empty() && parseU64(ports.substr(0, ports.find_first_of("-,")), &reserved) && reserved > 0 &&
        reserved <= 65535) {
        *port = uint16_t(reserved);
        return true;
    }
    uint64_t job = 0, step = 0;
    if (!parseU64(env::getString("SLURM_JOB_ID"), &job) || !parseU64(env::getString("SLURM_STEP_ID"), &step)) {
        *why = "no meeting point: SLURM_JOB_ID and SLURM_STEP_ID are not both set (not inside srun?); set "
               "HOSTCCL_ROOT_ADDR=host:port";
        return false;
    }
    *port = slurmStepPort(job, step);
    return true;
}

}  // namespace hostccl
