#include "planner/search.h"

#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <tuple>

#include "planner/gradient_sync.h"
#include "planner/step_model.h"

namespace hostccl::plan {

bool checkSearchSpace(const SearchSpace& s, std::string* why) {
    if (s.bucketBytes.empty() || s.compressions.empty() || s.overlap.empty())
        return *why = "the search space is empty (no bucket size, compressor or overlap choice)", false;
    for (uint64_t b : s.bucketBytes)
        if (b == 0) return *why = "bucket sizes must be above 0", false;
    Compression c;
    for (const std::string& spec : s.compressions)
        if (!parseCompression(spec, &c, why)) return false;
    if (s.maxMicroBatches == 0) return *why = "the micro-batch limit must be at least 1", false;
    if (!(s.compressionMinGain >= 0 && s.compressionMinGain <= 1))
        return *why = "the gain a compressed plan must show is a fraction from 0 to 1", false;
    return true;
}

namespace {

std::vector<uint32_t> divisors(uint32_t n) {
    std::vector<uint32_t> d;
    for (uint32_t k = 1; k <= n; ++k)
        if (n % k == 0) d.push_back(k);
    return d;
}

// Every plan worth predicting. Without data parallelism there are no gradients to
// average, so bucket sizes, compressors and overlap do not matter: one of each.
std::vector<Plan> candidates(const Workload& w, const Cluster& c, const SearchSpace& s) {
    std::vector<Plan> plans;
    const uint32_t n = c.ranks();
    auto allowed = [](const std::vector<uint32_t>& only, uint32_t v) {
        return only.empty() || std::find(only.begin(), only.end(), v) != only.end();
    };
    for (uint32_t tp : divisors(c.platform.ranksPerHost))
        for (uint32_t pp : divisors(n / std::min(tp, n))) {
            if (n % (tp * pp) != 0 || !allowed(s.tp, tp) || !allowed(s.pp, pp)) continue;
            Plan base;
            base.tp = tp, base.pp = pp, base.dp = n / (tp * pp);
            std::string unused;
            std::vector<uint64_t> buckets = s.bucketBytes;
            std::sort(buckets.begin(), buckets.end());  // the smallest of equivalent sizes is kept
            for (uint32_t m = 1; m <= s.maxMicroBatches; m *= 2) {
                base.microBatches = m;
                if (!checkPlan(w, c, base, &unused)) continue;
                if (base.dp == 1) {
                    plans.push_back(base);
                    continue;
                }
                for (uint64_t bucket : buckets)
                    for (const std::string& comp : s.compressions)
                        for (bool overlap : s.overlap) {
                            Plan p = base;
                            p.bucketBytes = bucket;
                            p.firstBucketBytes = std::min<uint64_t>(bucket, uint64_t(1) << 20);
                            p.compression = comp;
                            p.overlap = overlap;
                            plans.push_back(p);
                        }
            }
        }
    return plans;
}

}  // namespace

SearchResult searchPlans(const Workload& w, const Cluster& c, CommEstimator& comm, const SearchSpace& space) {
    SearchResult r;
    r.compressionMinGain = space.compressionMinGain;
    bool haveLeanest = false;
    std::set<std::string> seen;
    for (const Plan& p : candidates(w, c, space)) {
        RankedPlan rp{p, predictStep(w, c, comm, p)};
        ++r.considered;
        // A bucket size or overlap choice that changes nothing (every gradient in one
        // bucket either way) is the same plan: the first of them stands for the rest.
        const Prediction& q = rp.prediction;
        const std::string same = fmt::format("{} {} {} {} {} {} {} {} {}", p.dp, p.tp, p.pp, p.microBatches, p.compression,
                                             q.stepSeconds, q.dpCommSeconds, q.memoryBytes, q.wireBytes);
        if (!seen.insert(same).second) {
            ++r.equivalent;
            continue;
        }
        if (!haveLeanest || rp.prediction.memoryBytes < r.leanest.prediction.memoryBytes) r.leanest = rp, haveLeanest = true;
        if (w.memoryLimit > 0 && rp.prediction.memoryBytes > w.memoryLimit) {
            ++r.overMemory;
            continue;
        }
        r.plans.push_back(rp);
    }
    // Fastest first, a compressed plan's step counted longer by the gain it must show;
    // ties (plans the model cannot tell apart) by fewer bytes, then by name.
    auto rankingSeconds = [&space](const RankedPlan& rp) {
        return rp.prediction.stepSeconds * (rp.plan.compression == "none" ? 1.0 : 1.0 + space.compressionMinGain);
    };
    std::stable_sort(r.plans.begin(), r.plans.end(), [&rankingSeconds](const RankedPlan& a, const RankedPlan& b) {
        return std::make_tuple(rankingSeconds(a), a.prediction.wireBytes, planLabel(a.plan)) <
               std::make_tuple(rankingSeconds(b), b.prediction.wireBytes, planLabel(b.plan));
    });
    return r;
}

}  // namespace hostccl::plan
