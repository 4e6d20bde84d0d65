// Ranks for the planner's probes of a crowded host: each with its communicator (of
// the host's ranks), stream, sgemm operands and a 64 KiB message, the calls the probes
// time, and the host that starts them together: thread ranks here, or under a
// launcher this process's rank beside its host's other processes, every host of the
// job probing at once (as the job's ranks will share the cores).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "hccl/hccl.h"
#include "planner/host_sharing.h"

namespace hostccl::plan {

struct ProbeRank {
    HcclComm comm = nullptr;  // the host's ranks
    aclrtStream stream = nullptr;
    std::vector<float> a, b, c, data;
    HcclResult rc = HCCL_SUCCESS;  // the first failure; later calls do nothing
    double computeCpu = 0;  // CPU seconds this rank's thread has spent in gemms()

    void gemms(int count);  // `count` sgemms of 256 x 256 (about 0.3 ms each on one core)
    void allReduce();       // of `data`, waited for
    // A pipeline's hand-off: 1 KiB of `data` (what is timed is the wake-up, not the
    // wire, which the plan's hops charge on their own).
    void send(uint32_t peer);
    void recv(uint32_t peer);

private:
    void finish(HcclResult launched);
};

class ProbeHost {
public:
    // `threadRanks` ranks as threads of one communicator here, or with 0 this
    // process's rank of a communicator from the launcher's environment and one of
    // its host's ranks; false and `why` when creating fails.
    bool open(uint32_t threadRanks, std::string* why);
    // Closes them; false and `why` (if still empty) when an op had failed.
    bool close(std::string* why);
    uint32_t size() const { return hostRanks_; }
    // The job's ranks (thread ranks: the host's).
    uint32_t jobSize() const { return world_ != nullptr ? jobSize_ : hostRanks_; }

    // Wall seconds for `body(rank, i)` on every rank i of the host at once, from a
    // common start; under a launcher every host runs it, and the slowest rank's time
    // counts.
    double together(const std::function<void(ProbeRank&, uint32_t)>& body);
    // The same with every rank of the job as one: `body(rank, i)` for job rank i over
    // the job's communicator (a pipeline across the hosts, stage-major as plans place
    // their stages); thread ranks: together().
    double acrossJob(const std::function<void(ProbeRank&, uint32_t)>& body);
    // Wall seconds for `body` on the host's first rank with every other rank idle
    // (under a launcher the job's first rank; the others wait).
    double alone(const std::function<void(ProbeRank&)>& body);
    // CPU seconds the host's ranks have spent in gemms() since the last call, summed
    // over them (under a launcher: the mean host's sum; every process must call it).
    double takeComputeCpu();

private:
    bool openLaunched(std::string* why);
    bool worldReduce(double* seconds, HcclReduceOp op);  // launched: over the job's ranks
    double timedOverJob(const std::function<void()>& part);  // launched: from a barrier, the slowest

    std::vector<ProbeRank> ranks_;  // every rank here, or this process's one
    HcclComm world_ = nullptr;      // launched: the job's communicator
    ProbeRank job_;                 // launched: this process's rank of it
    uint32_t jobRank_ = 0, jobSize_ = 0;
    aclrtStream worldStream_ = nullptr;
    uint32_t hostRanks_ = 0, index_ = 0;  // ranks on the host; this process's among them
    bool first_ = true;                   // launched: the job's rank 0
    HcclResult rc_ = HCCL_SUCCESS;        // the first failure of the world's calls
};

}  // namespace hostccl::plan
