// One training step of a plan, predicted: GEMM time from the measured rate,
// tensor-parallel allreduces and stage-to-stage sends and gradient averaging from
// the simulator, the pipeline's fill and drain, and each rank's memory.
//
// A step, per data-parallel replica: `microBatches` micro-batches go through the
// pipeline stages (GPipe / 1F1B pace: the slowest stage sets it once full), then
// each stage's gradients are averaged across its data-parallel group in buckets,
// launched as backward makes them (overlap) or after it.
#pragma once

#include <string>

#include "planner/comm_estimator.h"
#include "planner/plan.h"

namespace hostccl::plan {

// False and `why` when the plan cannot run this workload on this cluster (sizes
// that do not divide, tensor parallelism across hosts, more stages than layers).
bool checkPlan(const Workload& w, const Cluster& c, const Plan& p, std::string* why);
// Predicts a plan checkPlan accepts.
Prediction predictStep(const Workload& w, const Cluster& c, CommEstimator& comm, const Plan& p);

}  // namespace hostccl::plan
