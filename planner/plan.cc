#include "planner/plan.h"

#include <fmt/format.h>

#include <algorithm>

namespace hostccl::plan {

Cluster::CoreGroups Cluster::coreGroups() const {
    const double hostCores = platform.cores() * platform.coreSpeed;
    if (coresPooled) return {1, platform.ranks(), hostCores * platform.hosts};
    return {platform.hosts, platform.ranksPerHost, hostCores};
}

double Cluster::coreShare() const {
    const double cores = platform.cores() * platform.coreSpeed;
    return std::min(1.0, cores / platform.ranksPerHost);
}

Cluster Cluster::forMicroBatch(uint64_t samples) const {
    Cluster c = *this;
    if (oneSampleSlowdown <= 0 || slowdownSamples <= 1 || double(samples) >= slowdownSamples) return c;
    const double along = (double(std::max<uint64_t>(samples, 1)) - 1) / (slowdownSamples - 1);
    c.computeSlowdown = oneSampleSlowdown + (computeSlowdown - oneSampleSlowdown) * along;
    return c;
}

Cluster Cluster::withRunningAtOnce(uint32_t ranks) const {
    Cluster c = *this;
    const CoreGroups g = coreGroups();
    // Linear in ranks per core past one, the simplest fit to what the probe reads:
    // its fixed part 82-171 us at 4 ranks on 2 cores, 105-416 us at 8. Checked on
    // every plan of the example MLP with up to 8 micro-batches (bench/planner/validate.sh):
    // scaling only the fixed part, or in proportion to ranks per core, fitted worse.
    const double probed = g.ranks / g.cores, now = std::min<double>(ranks, g.ranks) / g.cores;
    if (probed > 1) c.syncCrowding = std::clamp((now - 1) / (probed - 1), 0.0, 1.0);
    return c;
}

double Cluster::elementwiseSeconds(double bytes, double passBytes) const {
    return elementwise.empty() || bytes <= 0 ? 0 : computeSeconds(bytes / elementwise.at(passBytes));
}

namespace {
std::string mib(uint64_t bytes) {
    return bytes % (1 << 20) == 0 ? fmt::format("{}M", bytes >> 20) : fmt::format("{}K", (bytes + 1023) >> 10);
}
}  // namespace

std::string planLabel(const Plan& p) {
    if (p.dp == 1)  // nothing to average: buckets, compression and overlap do not apply
        return fmt::format("dp1 tp{} pp{} mb{}", p.tp, p.pp, p.microBatches);
    return fmt::format("dp{} tp{} pp{} mb{} bucket {}/{} {} {}", p.dp, p.tp, p.pp, p.microBatches, mib(p.bucketBytes),
                       mib(p.firstBucketBytes), p.compression, p.overlap ? "overlap" : "no-overlap");
}

bool lossyCompression(const std::string& spec) { return spec == "sign" || spec.rfind("topk", 0) == 0; }

}  // namespace hostccl::plan
