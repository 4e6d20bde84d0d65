// Where the ranks of a Slurm job step meet when nobody set HOSTCCL_ROOT_ADDR: the
// step's first node, on the first port Slurm reserved for the step (srun --resv-ports,
// SLURM_STEP_RESV_PORTS) or else on a port derived from the job and step ids.
// Derived, two steps of one job never share a port: consecutive step ids take
// consecutive ports, and a job runs fewer than kSlurmPortSpan steps at once. Two jobs
// whose first node and derived port coincide cannot join each other's rendezvous
// (the job id is in the job secret): the later one's rank 0 fails to listen, naming
// HOSTCCL_ROOT_ADDR.
#pragma once

#include <cstdint>
#include <string>

namespace hostccl {

// Derived ports lie in [kSlurmFirstPort, kSlurmFirstPort + kSlurmPortSpan): below the
// ephemeral range (32768 on), where any outgoing connection may hold a port.
constexpr uint32_t kSlurmFirstPort = 20000;
constexpr uint32_t kSlurmPortSpan = 12000;

// The first host of a Slurm host list ("node[03-05,9],login" -> "node03"); "" when
// the list is empty or malformed.
std::string firstSlurmHost(const std::string& hostList);
// The step's port from its job and step ids (see above).
uint16_t slurmStepPort(uint64_t jobId, uint64_t stepId);

// The meeting point from the step's variables (SLURM_STEP_NODELIST or
// SLURM_JOB_NODELIST, SLURM_STEP_RESV_PORTS, SLURM_JOB_ID, SLURM_STEP_ID). False with
// `why` naming what is missing.
bool slurmMeetingPoint(std::string* host, uint16_t* port, std::string* why);

}  // namespace hostccl
