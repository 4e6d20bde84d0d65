#include "tools/sim/cli_options.h"

#include <fmt/format.h>

#include <algorithm>
#include <sstream>

#include "sim/collective_runner.h"

namespace hostccl::sim {

void addOptions(CLI::App& app, SimOptions* o) {
    addPlatformOptions(app, o,
                       "create a communicator (ranks as threads here, or one per process under mpirun/srun), "
                       "print its measured platform as JSON and exit");
    app.add_option("-n,--ranks", o->ranksText, "total rank counts to sweep, e.g. 64,1024,16384 (multiples of ranks per host)");
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

std::vector<std::string> splitList(const std::string& s) {
    std::vector<std::string> parts;
    std::stringstream in(s);
    for (std::string item; std::getline(in, item, ',');)
        if (!item.empty()) parts.push_back(item);
    return parts;
}

bool resolve(SimOptions& o, std::vector<Platform>* platforms, std::string* why) {
    Platform base;
    if (!resolvePlatform(o, &base, why)) return false;
    o.collectives.clear();
    for (const std::string& key : splitList(o.collectivesText)) {
        CollType t;
        if (!collectiveFromKey(key, &t)) {
            *why = fmt::format("--collectives: unknown collective '{}'", key);
            return false;
        }
        o.collectives.push_back(t);
    }
    o.sizes.clear();
    for (const std::string& s : splitList(o.sizesText)) {
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
    for (const std::string& s : splitList(o.ranksText)) {
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
