// The search: every dp x tp x pp split of the cluster's ranks (tensor parallelism
// inside hosts), micro-batch counts, bucket sizes, compressors and overlap on or
// off, each predicted (step_model.h), those over the memory limit set aside, the
// rest ranked by predicted step time.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "planner/comm_estimator.h"
#include "planner/plan.h"

namespace hostccl::plan {

struct SearchSpace {
    std::vector<uint64_t> bucketBytes{uint64_t(1) << 20, uint64_t(4) << 20, uint64_t(25) << 20, uint64_t(100) << 20};
    std::vector<std::string> compressions{"none", "fp16", "bf16", "topk:0.01", "sign"};
    uint32_t maxMicroBatches = 64;  // powers of two up to this that divide a replica's batch
    std::vector<bool> overlap{true, false};
    // Degrees to consider (empty: every one that fits), e.g. {1} for a program that
    // runs data parallelism only.
    std::vector<uint32_t> tp, pp;
    // A compressed plan ranks above an exact one (compression "none", or no data
    // parallelism) only when the exact one is predicted this much slower (a fraction): compressors round or drop gradients,
    // and plans apart by a few percent are within what the prediction can tell.
    double compressionMinGain = 0.05;
};

struct RankedPlan {
    Plan plan;
    Prediction prediction;
};

struct SearchResult {
    std::vector<RankedPlan> plans;  // fitting the memory limit, fastest first (but compressionMinGain)
    uint64_t considered = 0;        // plans predicted
    uint64_t overMemory = 0;        // of them, set aside for memory
    uint64_t equivalent = 0;        // of them, the same as one listed but for a choice that changes nothing
    RankedPlan leanest;             // the plan needing the least memory (for the error when none fits)
    double compressionMinGain = 0;  // the ranking's rule (SearchSpace::compressionMinGain)
};

// Checks the search space (compressor specs, bucket sizes); false and `why`.
bool checkSearchSpace(const SearchSpace& s, std::string* why);
SearchResult searchPlans(const Workload& w, const Cluster& c, CommEstimator& comm, const SearchSpace& space);

}  // namespace hostccl::plan
