// The command-line options that say what cluster to model: a platform file, a saved
// HostcclCommDescribe text, or defaults, with per-option overrides (hosts, ranks per
// host, cores, the network). Shared by hostccl-sim and hostccl-plan, so both read
// a cluster the same way and report bad values in the same words.
#pragma once

#include <CLI/CLI.hpp>

#include <cstdint>
#include <limits>
#include <string>

#include "sim/platform.h"

namespace hostccl::sim {

constexpr double kUnset = std::numeric_limits<double>::quiet_NaN();

struct PlatformOptions {
    std::string platformPath;
    std::string describePath;  // HostcclCommDescribe's text, saved
    bool probe = false;        // measure this host (or the launcher's job)
    uint32_t probeRanks = 0;   // 0: one rank per process under a launcher, else 4 threads
    uint32_t hosts = 0, ranksPerHost = 0;
    double cores = 0;  // below 1: one core at that part of its speed
    // Not given: NaN (any number given, negative ones included, is checked).
    double netAlphaUs = kUnset, netGBps = kUnset, nicGBps = kUnset, oversubscription = kUnset, hostsPerLeaf = kUnset;
};

// `probeHelp` says what --probe does in this tool.
void addPlatformOptions(CLI::App& app, PlatformOptions* o, const std::string& probeHelp);
// The platform file (or description, or the defaults: 1 host of 8 ranks) with the
// command line's numbers over it; false and `why` naming the option or field.
bool resolvePlatform(const PlatformOptions& o, Platform* out, std::string* why);
// The command line's numbers over `p` (a loaded or probed platform), each checked;
// false and `why` naming the option.
bool applyOverrides(const PlatformOptions& o, Platform* p, std::string* why);
// --probe: a communicator (probeRanks threads, or 4 without a launcher, or one rank
// per process under one) measures the platform; `*printer` is true on rank 0.
bool probeFromOptions(const PlatformOptions& o, Platform* out, bool* printer, std::string* why);

}  // namespace hostccl::sim
