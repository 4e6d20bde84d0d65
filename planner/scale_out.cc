#include "planner/scale_out.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>

namespace hostccl::plan {

namespace {

const char* strategyOf(const Plan& p) {
    if (p.tp > 1 && p.pp > 1) return "dp+tp+pp";
    if (p.tp > 1) return "dp+tp";
    if (p.pp > 1) return "dp+pp";
    return "dp";
}

const std::vector<std::string>& strategies() {
    static const std::vector<std::string> all{"dp", "dp+tp", "dp+pp", "dp+tp+pp"};
    return all;
}

}  // namespace

ScaleResult predictScaling(const ModelSpec& model, uint64_t perRankBatch, uint64_t memoryLimit, const Cluster& host,
                           const std::vector<uint32_t>& rankCounts, const SearchSpace& space) {
    ScaleResult r;
    {  // one rank alone: the reference
        Cluster one = host;
        one.platform.hosts = 1;
        one.platform.ranksPerHost = 1;
        if (one.platform.coresPerHost > 0) sim::setCores(&one.platform, 1);
        CommEstimator comm(one.platform);
        const SearchResult s = searchPlans(Workload{model, perRankBatch, memoryLimit}, one, comm, space);
        if (!s.plans.empty()) r.singleRankSamplesPerSecond = double(perRankBatch) / s.plans.front().prediction.stepSeconds;
    }
    std::map<std::string, uint32_t> stopped;
    for (uint32_t n : rankCounts) {
        Cluster c = host;
        c.platform.hosts = n / host.platform.ranksPerHost;
        CommEstimator comm(c.platform);
        const Workload w{model, perRankBatch * n, memoryLimit};
        const SearchResult s = searchPlans(w, c, comm, space);
        for (const std::string& strategy : strategies()) {
            ScalePoint pt;
            pt.ranks = n;
            pt.strategy = strategy;
            for (const RankedPlan& rp : s.plans)  // ranked first: the first of its strategy is its best
                if (strategy == strategyOf(rp.plan)) {
                    pt.found = true;
                    pt.best = rp;
                    break;
                }
            if (pt.found) {
                pt.samplesPerSecond = double(w.globalBatch) / pt.best.prediction.stepSeconds;
                if (r.singleRankSamplesPerSecond > 0) pt.efficiency = pt.samplesPerSecond / (r.singleRankSamplesPerSecond * n);
                if (pt.efficiency < 0.5 && !stopped.count(strategy)) stopped[strategy] = n;
            }
            r.points.push_back(pt);
        }
    }
    for (const std::string& strategy : strategies()) r.stopsScaling.emplace_back(strategy, stopped.count(strategy) ? stopped[strategy] : 0);
    return r;
}

std::string scaleTable(const ScaleResult& r) {
    std::string out = fmt::format("# one rank alone: {:.1f} samples/s\n{:>6}  {:<9} {:<48} {:>10} {:>12} {:>10}\n",
                                  r.singleRankSamplesPerSecond, "ranks", "strategy", "best plan", "step_ms", "samples/s",
                                  "scale_eff");
    for (const ScalePoint& p : r.points) {
        if (!p.found) {
            out += fmt::format("{:>6}  {:<9} {:<48}\n", p.ranks, p.strategy, "(no plan: splits or memory)");
            continue;
        }
        out += fmt::format("{:>6}  {:<9} {:<48} {:>10.3f} {:>12.1f} {:>10.3f}\n", p.ranks, p.strategy, planLabel(p.best.plan),
                           p.best.prediction.stepSeconds * 1e3, p.samplesPerSecond, p.efficiency);
    }
    for (const auto& [strategy, at] : r.stopsScaling)
        out += at ? fmt::format("# {}: stops scaling at {} ranks (efficiency below 0.5)\n", strategy, at)
                  : fmt::format("# {}: efficiency 0.5 or more at every rank count run\n", strategy);
    return out;
}

}  // namespace hostccl::plan
