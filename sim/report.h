// What a sweep produced, as a table on the terminal, a CSV, and an HTML page with
// one SVG plot per collective and size (bus bandwidth against ranks, a line per
// algorithm); the page has no scripts or external files, so it opens offline.
#pragma once

#include <string>
#include <vector>

#include "sim/collective_runner.h"

namespace hostccl::sim {

struct Row {
    OpOutcome outcome;
    uint32_t hosts = 0;
    bool selected = false;  // the selector's pick at this point
    bool fastest = false;   // the fastest candidate simulated at this point
};

// Scaling efficiency of rows[i]: its busbw over that of the same collective, size and
// algorithm at the fewest ranks the sweep ran it at (1: busbw held as ranks grew,
// which is what an ideal algorithm does; busbw already counts the bytes each rank
// must move). 0 when it failed or that first point did.
double scalingEfficiency(const std::vector<Row>& rows, size_t i);
// rows[i] as a line of the table (rows before it give its scaling efficiency).
std::string tableLine(const std::vector<Row>& rows, size_t i);
std::string tableHeader();
std::string csv(const std::vector<Row>& rows);
std::string html(const std::vector<Row>& rows, const std::string& platformSummary);

// `s` with <, > and & escaped for HTML text.
std::string htmlEscape(const std::string& s);

}  // namespace hostccl::sim
