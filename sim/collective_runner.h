// One collective on every simulated rank: the arguments the API would build, the
// buffers (real ones whose results are checked exactly, or, sizes only, one shared
// pair), the algorithm the selector picks on each rank (or the one asked for), and
// the predicted time with nccl-tests' bandwidth figures.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "common/coll_type.h"
#include "sim/simulation.h"

namespace hostccl::sim {

struct OpSpec {
    CollType type = CollType::AllReduce;
    uint64_t bytes = 0;  // nccl-tests' size: the whole vector (gathers: the result; scatters: the input)
    uint32_t root = 0;
    std::string algorithm;  // empty: the selector's choice; else an algorithm's name ("ring", ...)
    // Bytes of data the op's host holds and touches around it (rates by the larger of
    // this and the op's own buffers; a training step's GEMMs leave its gradients
    // out of cache).
    uint64_t workingSetBytes = 0;
};

struct OpOutcome {
    bool ok = false;
    std::string error;      // why not ok
    std::string algorithm;  // what ran (the selector's pick, or the one asked for)
    double seconds = 0;     // predicted: from the start to the last rank's return
    double modelSeconds = 0;  // the selector's cost-model estimate for what ran (rank 0's)
    bool checked = false;   // results compared element by element (carrying data)
    uint64_t messages = 0;
    double algbw() const;   // bytes / seconds, as nccl-tests
    double busbw() const;
    OpSpec spec;
    uint32_t ranks = 0;
};

// The collectives the simulator runs and how they are named on command lines.
const std::vector<CollType>& simulatedCollectives();
const char* collectiveKey(CollType t);  // "allreduce", ...
bool collectiveFromKey(const std::string& key, CollType* out);
// The element count per rank of an op of `bytes` on `ranks` ranks, rounded down.
uint64_t elementsPerRank(CollType t, uint64_t bytes, uint32_t ranks);
// nccl-tests' bus-bandwidth factor.
double busFactor(CollType t, uint32_t ranks);

// The algorithms the selector weighs for `spec` on this simulation (their names).
std::vector<std::string> candidateNames(Simulation& sim, const OpSpec& spec);
OpOutcome runCollective(Simulation& sim, const OpSpec& spec);

}  // namespace hostccl::sim
