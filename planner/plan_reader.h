// Reading a plan back from hostccl-plan's plan file, for the programs that train
// with it (train_mlp --plan). Depends on nothing but the plan itself and JSON, so a
// training program need not link the planner or the simulator.
#pragma once

#include <cstddef>
#include <string>

#include "planner/plan.h"

namespace hostccl::plan {

// Reads plan number `index` (0: the first choice) from a plan file; false and `why`
// naming the field. `predictedStepMs` (optional): the step the planner predicted for
// it (its "predicted.step_ms"; 0 when the file has none), for a run to report against.
bool readPlanFile(const std::string& path, size_t index, Plan* out, std::string* why, double* predictedStepMs = nullptr);

}  // namespace hostccl::plan
