// What a sweep produced, as a table on the terminal, a CSV, and an HTML page with
// one SVG plot per collective and size (bus bandwidth against ranks, a line per
// algorithm); the page has no scripts or external files, so it opens offline.
#pragma once

#include <string>
#include <vector>

#include "tools/sim/collective_runner.h"

namespace hostccl::sim {

struct Row {
    OpOutcome outcome;
    uint32_t hosts = 0;
    bool selected = false;  // the selector's pick at this point
    bool fastest = false;   // the fastest candidate simulated at this point
};

std::string tableLine(const Row& r);
std::string tableHeader();
std::string csv(const std::vector<Row>& rows);
std::string html(const std::vector<Row>& rows, const std::string& platformSummary);

}  // namespace hostccl::sim
