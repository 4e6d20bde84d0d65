// The planner's HTML report: what was planned for, each top plan's predicted step
// as a stacked bar of its parts (compute, tensor-parallel allreduces, stage hops,
// bubble, exposed gradient averaging, optimizer), memory and wire bytes, and the
// ranked table. One file, inline SVG, no scripts: it opens offline.
#pragma once

#include <string>

#include "planner/plan_file.h"

namespace hostccl::plan {

std::string planReportHtml(const PlanReport& r, size_t topPlans);

}  // namespace hostccl::plan
