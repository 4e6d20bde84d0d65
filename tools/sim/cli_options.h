// hostccl-sim's command line: what to simulate (platform, rank counts, collectives,
// sizes, algorithms, mode) and where results go, checked before anything runs.
#pragma once

#include <CLI/CLI.hpp>

#include <string>
#include <vector>

#include "common/coll_type.h"
#include "sim/platform_options.h"
#include "sim/platform.h"

namespace hostccl::sim {

struct SimOptions : PlatformOptions {
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
// "a,b,,c": its non-empty parts.
std::vector<std::string> splitList(const std::string& s);
// "64K", "1M", "1G", "4096": bytes; false on anything else or on overflow.
bool parseBytes(const std::string& text, uint64_t* out);

}  // namespace hostccl::sim
