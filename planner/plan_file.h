// The planner's outputs: a ranked table for people, and a plan file (JSON) for
// programs (train_mlp --plan: plan_reader.h) and for the report.
#pragma once

#include <string>
#include <vector>

#include "planner/search.h"

namespace hostccl::plan {

struct PlanReport {
    const Workload* workload = nullptr;
    const Cluster* cluster = nullptr;
    const SearchResult* result = nullptr;
};

// The first `rows` plans, one line each, with the prediction's parts.
std::string rankedTable(const PlanReport& r, size_t rows);
// Every fitting plan in ranking order (fastest first, but compressionMinGain), with
// what it was planned for.
std::string planFileJson(const PlanReport& r);

}  // namespace hostccl::plan
