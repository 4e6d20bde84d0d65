// Thread ranks for the planner's probes of a crowded host: each with its
// communicator, stream, sgemm operands and a 64 KiB message, the calls the probes
// time, and a runner that starts them together.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "hccl/hccl.h"

namespace hostccl::plan {

constexpr uint64_t kSyncProbeBytes = 64 << 10;

struct ProbeRank {
    HcclComm comm = nullptr;
    aclrtStream stream = nullptr;
    std::vector<float> a, b, c, data;
    HcclResult rc = HCCL_SUCCESS;  // the first failure; later calls do nothing

    void gemms(int count);  // `count` sgemms of 256 x 256 (about 0.3 ms each on one core)
    void allReduce();       // of `data`, waited for
    void send(uint32_t peer);
    void recv(uint32_t peer);

private:
    void finish(HcclResult launched);
};

// `count` thread ranks of one communicator; false and `why` when creating fails.
bool openProbeRanks(uint32_t count, std::vector<ProbeRank>* ranks, std::string* why);
// Closes them; false and `why` (if still empty) when an op had failed.
bool closeProbeRanks(std::vector<ProbeRank>* ranks, std::string* why);

// Wall seconds for `body(i)` to run on a thread per rank i of `ranks`, from a common start.
double timeTogether(size_t ranks, const std::function<void(size_t)>& body);

}  // namespace hostccl::plan
