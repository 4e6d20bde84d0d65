// hostccl-sim's command line: what to simulate (platform, rank counts, collectives,
// sizes, algorithms, mode) and where results go, checked before anything runs.
#pragma once

#include <CLI/CLI.hpp>

#include <limits>
#include <string>
#include <vector>

#include "common/coll_type.h"
#include "transports/sim/platform.h"

namespace hostccl::sim {

constexpr double kUnset = std::numeric_limits<double>::quiet_NaN();

struct SimOptions {
    std::string platformPath;
    std::string describePath;  // HostcclCommDescribe's text, saved
    bool probe = false;        // measure this host (or the launcher's job) and print the platform
    uint32_t probeRanks = 0;   // 0: one rank per process under a launcher, else 4 threads
    uint32_t hosts = 0, ranksPerHost = 0;
    double cores = 0;  // below 1: one core at that part of its speed
    // Not given: NaN (any number given, negative ones included, is checked).
    double netAlphaUs = kUnset, netGBps = kUnset, nicGBps = kUnset, oversubscription = kUnset, hostsPerLeaf = kUnset;
    std::string ranksText, collectivesText = "allreduce", sizesText = "1M";
    std::string algorithm = "auto";  // auto, all, or an algorithm's name
    bool data = false;
    bool printPlatform = false;
    std::string csvPath, htmlPath;

    // Resolved by resolve().
    std::vector<CollType> collectives;
    std::vector<uint64_t> sizes;
};

void addOptions(CLI::App& app, SimOptions* o);
// Checks everything and builds one platform per rank count; false and `why` (naming
// the option or field) on bad input.
bool resolve(SimOptions& o, std::vector<Platform>* platforms, std::string* why);
// "64K", "1M", "1G", "4096": bytes; false on anything else or on overflow.
bool parseBytes(const std::string& text, uint64_t* out);

}  // namespace hostccl::sim
