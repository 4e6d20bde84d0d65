// hostccl-sim: hostccl's own algorithms and selector on a simulated cluster.
// For each rank count, collective and size it runs the selector's pick and, with
// --algorithms all, every candidate, on a virtual clock (transports/sim/), and
// prints the predicted time and bandwidth; --csv and --html write the results.
#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "hostccl/hostccl.h"
#include "tools/sim/cli_options.h"
#include "sim/probe.h"
#include "sim/report.h"

using namespace hostccl;
using namespace hostccl::sim;

namespace {
bool writeFile(const std::string& path, const std::string& text) {
    std::ofstream f(path);
    f << text;
    return static_cast<bool>(f);
}

// --probe: the measured platform as JSON, printed by rank 0 only.
int probeAndPrint(const SimOptions& opt) {
    Platform p;
    bool printer = false;
    std::string why;
    if (!probeFromOptions(opt, &p, &printer, &why)) {
        std::fprintf(stderr, "hostccl-sim --probe: %s\n", why.c_str());
        return 1;
    }
    if (printer) std::fputs(platformJson(p).c_str(), stdout);
    return 0;
}

// One point: the selector's pick, then (with `all`) every other candidate.
void simulatePoint(Simulation& sim, const OpSpec& base, bool all, std::vector<Row>* rows) {
    const size_t first = rows->size();
    Row chosen{runCollective(sim, base), sim.platform().hosts, true, false};
    rows->push_back(chosen);
    if (all)
        for (const std::string& name : candidateNames(sim, base)) {
            if (name == chosen.outcome.algorithm) continue;
            OpSpec s = base;
            s.algorithm = name;
            rows->push_back(Row{runCollective(sim, s), sim.platform().hosts, false, false});
        }
    size_t best = first;
    for (size_t i = first; i < rows->size(); ++i)
        if ((*rows)[i].outcome.ok && (!(*rows)[best].outcome.ok || (*rows)[i].outcome.seconds < (*rows)[best].outcome.seconds))
            best = i;
    if ((*rows)[best].outcome.ok) (*rows)[best].fastest = true;
}
}  // namespace

int main(int argc, char** argv) {
    SimOptions opt;
    CLI::App app{"hostccl-sim: hostccl's algorithms and selector on a simulated cluster, on virtual time"};
    addOptions(app, &opt);
    CLI11_PARSE(app, argc, argv);
    std::string why;
    if (opt.probe) return probeAndPrint(opt);
    std::vector<Platform> platforms;
    if (!resolve(opt, &platforms, &why)) {
        std::fprintf(stderr, "hostccl-sim: %s\n", why.c_str());
        return 2;
    }
    if (opt.printPlatform) {
        std::fputs(platformJson(platforms.front()).c_str(), stdout);
        return 0;
    }
    std::vector<Row> rows;
    std::fputs(tableHeader().c_str(), stdout);
    const auto began = std::chrono::steady_clock::now();
    bool failed = false;
    for (const Platform& p : platforms) {
        Simulation sim(p, opt.data);
        for (CollType t : opt.collectives)
            for (uint64_t bytes : opt.sizes) {
                OpSpec spec;
                spec.type = t;
                spec.bytes = bytes;
                spec.algorithm = opt.algorithm;
                const size_t from = rows.size();
                if (opt.algorithm == "all" || opt.algorithm == "auto") {
                    spec.algorithm.clear();
                    simulatePoint(sim, spec, opt.algorithm == "all", &rows);
                } else {
                    rows.push_back(Row{runCollective(sim, spec), p.hosts, false, true});
                }
                for (size_t i = from; i < rows.size(); ++i) {
                    std::fputs(tableLine(rows, i).c_str(), stdout);
                    failed = failed || !rows[i].outcome.ok;
                }
                std::fflush(stdout);
            }
    }
    const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - began).count();
    std::printf("# simulated %zu points in %.2f s (%s)\n", rows.size(), took, opt.data ? "data carried and checked" : "sizes only");
    if (!opt.csvPath.empty() && !writeFile(opt.csvPath, csv(rows))) {
        std::fprintf(stderr, "hostccl-sim: cannot write %s\n", opt.csvPath.c_str());
        return 1;
    }
    if (!opt.htmlPath.empty() && !writeFile(opt.htmlPath, html(rows, platforms.back().summary()))) {
        std::fprintf(stderr, "hostccl-sim: cannot write %s\n", opt.htmlPath.c_str());
        return 1;
    }
    return failed ? 1 : 0;
}
