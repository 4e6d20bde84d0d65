#include "planner/stages.h"

#include <algorithm>
#include <limits>

namespace hostccl::plan {

std::vector<uint32_t> balancedStages(const std::vector<double>& cost, uint32_t stages, const std::vector<bool>& cutBefore) {
    const size_t n = cost.size();
    std::vector<double> prefix(n + 1, 0);
    for (size_t i = 0; i < n; ++i) prefix[i + 1] = prefix[i] + cost[i];
    const double inf = std::numeric_limits<double>::infinity();
    // best[k][i]: the least maximum over k stages holding the first i layers;
    // cut[k][i]: where the last of those k stages starts.
    std::vector<std::vector<double>> best(stages + 1, std::vector<double>(n + 1, inf));
    std::vector<std::vector<uint32_t>> cut(stages + 1, std::vector<uint32_t>(n + 1, 0));
    best[0][0] = 0;
    for (uint32_t k = 1; k <= stages; ++k)
        for (size_t i = k; i <= n; ++i)
            for (size_t j = k - 1; j < i; ++j) {
                if (j > 0 && !cutBefore.empty() && !cutBefore[j]) continue;  // no stage may begin at j
                if (best[k - 1][j] == inf) continue;
                const double m = std::max(best[k - 1][j], prefix[i] - prefix[j]);
                if (m < best[k][i]) best[k][i] = m, cut[k][i] = static_cast<uint32_t>(j);
            }
    if (best[stages][n] == inf) return {};
    std::vector<uint32_t> starts(stages);
    size_t end = n;
    for (uint32_t k = stages; k >= 1; --k) {
        starts[k - 1] = cut[k][end];
        end = cut[k][end];
    }
    return starts;
}

}  // namespace hostccl::plan
