#include "tools/sim/cli_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "tools/sim/collective_runner.h"
#include "tools/sim/probe.h"

namespace hostccl::sim {

void addOptions(CLI::App& app, SimOptions* o) {
    auto* platform =
        app.add_option("--platform", o->platformPath, "platform JSON (see docs/simulator.md); else the defaults below");
    app.add_option("--describe", o->describePath, "the platform from a saved HostcclCommDescribe text")
        ->excludes(platform);
    app.add_flag("--probe", o->probe,
                 "create a communicator (ranks as threads here, or one per process under mpirun/srun), "
                 "print its measured platform as JSON and exit");
    app.add_option("--probe-ranks", o->probeRanks, "threads to probe with (default: the launcher's ranks, else 4)");
    app.add_option("--hosts", o->hosts, "hosts (default 1, or the platform file's)")->check(CLI::PositiveNumber);
    app.add_option("--ranks-per-host", o->ranksPerHost, "ranks on each host (default 8, or the platform file's)")
        ->check(CLI::PositiveNumber);
    app.add_option("--cores", o->cores,
                   "cores per host (default: one per rank); below 1, one core at that part of its speed "
                   "(emulated hosts sharing one machine's cores)")
        ->check(CLI::PositiveNumber);
    app.add_option("-n,--ranks", o->ranksText, "total rank counts to sweep, e.g. 64,1024,16384 (multiples of ranks per host)");
    app.add_option("--net-alpha-us", o->netAlphaUs, "latency between hosts, microseconds");
    app.add_option("--net-GBps", o->netGBps, "one flow's bandwidth between hosts, GB/s");
    app.add_option("--nic-GBps", o->nicGBps, "each host's NIC bandwidth per direction, GB/s (0: unlimited)");
    app.add_option("--hosts-per-leaf", o->hostsPerLeaf, "hosts under one leaf switch (0: one non-blocking switch)");
    app.add_option("--oversubscription", o->oversubscription, "leaf uplink oversubscription (1: non-blocking)");
    app.add_option("-c,--collectives", o->collectivesText, "allreduce,allgather,reducescatter,broadcast,reduce,alltoall");
    app.add_option("-b,--sizes", o->sizesText, "op sizes as nccl-tests count them, e.g. 64K,1M,64M");
    app.add_option("-a,--algorithms", o->algorithm, "auto (the selector's pick), all (every candidate too), or one name");
    app.add_flag("--data", o->data, "carry real data and check every result exactly (memory grows with ranks x size)");
    app.add_flag("--print-platform", o->printPlatform, "print the platform as JSON and exit");
    app.add_option("--csv", o->csvPath, "write the results as CSV");
    app.add_option("--html", o->htmlPath, "write an HTML page with the busbw-against-ranks plots");
}

bool parseBytes(const std::string& text, uint64_t* out) {
    if (text.empty() || text[0] < '0' || text[0] > '9') return false;
    size_t end = 0;
    unsigned long long v = 0;
    try {
        v = std::stoull(text, &end);
    } catch (...) {
        return false;
    }
    uint64_t unit = 1;
    const std::string suffix = text.substr(end);
    if (suffix == "K" || suffix == "k") unit = 1ull << 10;
    else if (suffix == "M" || suffix == "m") unit = 1ull << 20;
    else if (suffix == "G" || suffix == "g") unit = 1ull << 30;
    else if (!suffix.empty()) return false;
    if (v > UINT64_MAX / unit) return false;
    *out = v * unit;
    return true;
}

namespace {
std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> parts;
    std::stringstream in(s);
    for (std::string item; std::getline(in, item, ',');)
        if (!item.empty()) parts.push_back(item);
    return parts;
}

bool loadPlatform(const SimOptions& o, Platform* p, std::string* why) {
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

// Command-line numbers override the file's; each is checked like the file's.
bool applyOverrides(const SimOptions& o, Platform* p, std::string* why) {
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
}  // namespace

bool resolve(SimOptions& o, std::vector<Platform>* platforms, std::string* why) {
    Platform base;
    if (!loadPlatform(o, &base, why) || !applyOverrides(o, &base, why)) return false;
    o.collectives.clear();
    for (const std::string& key : split(o.collectivesText)) {
        CollType t;
        if (!collectiveFromKey(key, &t)) {
            *why = fmt::format("--collectives: unknown collective '{}'", key);
            return false;
        }
        o.collectives.push_back(t);
    }
    o.sizes.clear();
    for (const std::string& s : split(o.sizesText)) {
        uint64_t b = 0;
        if (!parseBytes(s, &b) || b == 0 || b > (uint64_t(1) << 40)) {
            *why = fmt::format("--sizes: '{}' is not a size from 1 byte to 1T (e.g. 64K, 1M, 1G)", s);
            return false;
        }
        o.sizes.push_back(b);
    }
    if (o.collectives.empty() || o.sizes.empty()) {
        *why = o.collectives.empty() ? "--collectives names none" : "--sizes names none";
        return false;
    }
    std::vector<uint64_t> counts;
    for (const std::string& s : split(o.ranksText)) {
        uint64_t n = 0;
        if (!parseBytes(s, &n) || n == 0 || n > (1u << 24) || n % base.ranksPerHost != 0) {
            *why = fmt::format("--ranks: '{}' is not a rank count from 1 to 16777216 that is a multiple of {} ranks per host",
                               s, base.ranksPerHost);
            return false;
        }
        counts.push_back(n);
    }
    if (counts.empty()) counts.push_back(uint64_t(base.hosts) * base.ranksPerHost);
    // Fewest ranks first: each algorithm's scaling efficiency is against its first point.
    std::sort(counts.begin(), counts.end());
    counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
    platforms->clear();
    for (uint64_t n : counts) {
        Platform p = base;
        p.hosts = static_cast<uint32_t>(n / base.ranksPerHost);
        platforms->push_back(p);
    }
    return true;
}

}  // namespace hostccl::sim
