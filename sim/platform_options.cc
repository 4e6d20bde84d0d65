#include "sim/platform_options.h"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <sstream>

#include "hostccl/hostccl.h"
#include "sim/probe.h"

namespace hostccl::sim {

void addPlatformOptions(CLI::App& app, PlatformOptions* o, const std::string& probeHelp) {
    auto* platform =
        app.add_option("--platform", o->platformPath, "platform JSON (see docs/simulator.md); else the defaults below");
    app.add_option("--describe", o->describePath, "the platform from a saved HostcclCommDescribe text")
        ->excludes(platform);
    app.add_flag("--probe", o->probe, probeHelp);
    app.add_option("--probe-ranks", o->probeRanks, "threads to probe with (default: the launcher's ranks, else 4)");
    app.add_option("--hosts", o->hosts, "hosts (default 1, or the platform file's)")->check(CLI::PositiveNumber);
    app.add_option("--ranks-per-host", o->ranksPerHost, "ranks on each host (default 8, or the platform file's)")
        ->check(CLI::PositiveNumber);
    app.add_option("--cores", o->cores,
                   "cores per host (default: one per rank); below 1, one core at that part of its speed "
                   "(emulated hosts sharing one machine's cores)")
        ->check(CLI::PositiveNumber);
    app.add_option("--net-alpha-us", o->netAlphaUs, "latency between hosts, microseconds");
    app.add_option("--net-GBps", o->netGBps, "one flow's bandwidth between hosts, GB/s");
    app.add_option("--nic-GBps", o->nicGBps, "each host's NIC bandwidth per direction, GB/s (0: unlimited)");
    app.add_option("--hosts-per-leaf", o->hostsPerLeaf, "hosts under one leaf switch (0: one non-blocking switch)");
    app.add_option("--oversubscription", o->oversubscription, "leaf uplink oversubscription (1: non-blocking)");
}

namespace {
bool loadPlatform(const PlatformOptions& o, Platform* p, std::string* why) {
    if (!o.describePath.empty()) {
        std::ifstream f(o.describePath);
        std::stringstream text;
        text << f.rdbuf();
        if (f && platformFromDescription(text.str(), p, why)) return true;
        *why = fmt::format("--describe {}: {}", o.describePath, f ? *why : "cannot read it");
        return false;
    }
    if (o.platformPath.empty()) {
        *p = fromCostParams(CostParams::defaults(), 1, 8, 0, LinkClass::Tcp);
        return true;
    }
    std::ifstream f(o.platformPath);
    if (!f) {
        *why = fmt::format("--platform: cannot read {}", o.platformPath);
        return false;
    }
    std::stringstream text;
    text << f.rdbuf();
    if (parsePlatform(text.str(), p, why)) return true;
    *why = fmt::format("--platform {}: {}", o.platformPath, *why);
    return false;
}

}  // namespace

// Command-line numbers override the file's; each is checked like the file's.
bool applyOverrides(const PlatformOptions& o, Platform* p, std::string* why) {
    auto bad = [why](const char* name, double v) {
        *why = fmt::format("{} must be {} (got {})", name, std::string(name) == "--net-alpha-us" || std::string(name) == "--nic-GBps" ? "0 or more" : "greater than 0", v);
        return false;
    };
    if (o.hosts > 0) p->hosts = o.hosts;
    if (o.ranksPerHost > 0) p->ranksPerHost = o.ranksPerHost;
    if (o.cores > 0 && !setCores(p, o.cores)) {
        *why = fmt::format("--cores must be a whole number, or a part of one core below 1 (got {})", o.cores);
        return false;
    }
    if (!std::isnan(o.netAlphaUs)) {
        if (o.netAlphaUs < 0) return bad("--net-alpha-us", o.netAlphaUs);
        p->net.alpha = o.netAlphaUs * 1e-6;
    }
    if (!std::isnan(o.netGBps)) {
        if (o.netGBps <= 0) return bad("--net-GBps", o.netGBps);
        p->net.beta = 1e-9 / o.netGBps;
    }
    if (!std::isnan(o.nicGBps)) {
        if (o.nicGBps < 0) return bad("--nic-GBps", o.nicGBps);
        p->nicBytesPerSec = o.nicGBps * 1e9;
    }
    if (!std::isnan(o.hostsPerLeaf)) {
        if (o.hostsPerLeaf < 0 || o.hostsPerLeaf > (1 << 24) || o.hostsPerLeaf != std::floor(o.hostsPerLeaf)) {
            *why = fmt::format("--hosts-per-leaf must be a whole number from 0 (got {})", o.hostsPerLeaf);
            return false;
        }
        p->hostsPerSwitch = static_cast<uint32_t>(o.hostsPerLeaf);
    }
    if (!std::isnan(o.oversubscription)) {
        if (o.oversubscription <= 0) return bad("--oversubscription", o.oversubscription);
        p->oversubscription = o.oversubscription;
    }
    return true;
}

bool resolvePlatform(const PlatformOptions& o, Platform* out, std::string* why) {
    Platform p;
    if (!loadPlatform(o, &p, why) || !applyOverrides(o, &p, why)) return false;
    *out = p;
    return true;
}

bool probeFromOptions(const PlatformOptions& o, Platform* out, bool* printer, std::string* why) {
    uint32_t rank, size, local;
    const bool launched = HostcclGetLauncherRank(&rank, &size, &local) == HCCL_SUCCESS;
    const uint32_t threads = o.probeRanks > 0 ? o.probeRanks : launched ? 0 : 4;
    return probePlatform(threads, out, printer, why);
}

}  // namespace hostccl::sim
