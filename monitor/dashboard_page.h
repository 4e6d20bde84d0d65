// The dashboard the endpoint serves at / (monitor/dashboard.html, built into
// the library: the page needs nothing from outside, so it works offline): it polls
// /job.json every second and draws the arrival-skew heat map, the links' rates, the
// collectives' rates and the current findings.
#pragma once

namespace hostccl::monitor {

const char* dashboardPage();

}  // namespace hostccl::monitor
