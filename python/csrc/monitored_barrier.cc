// ProcessGroupHostccl::monitoredBarrier (dist.monitored_barrier): the ranks meet
// through the group's store, not its stream, so rank 0 can tell which ranks did not
// arrive in time, as torch's Gloo backend does (and in its words, which users and
// tests match on).
#include <c10/util/Exception.h>

#include <algorithm>
#include <string>

#include "process_group.h"

namespace hostccl::torch_backend {

namespace {

std::string joined(const std::vector<int>& ranks) {
    std::string text;
    for (int r : ranks) text += (text.empty() ? "" : ", ") + std::to_string(r);
    return text;
}

// Waits for `key` until `deadline`; false once it passed.
bool waitFor(c10d::Store& store, const std::string& key, std::chrono::steady_clock::time_point deadline) {
    using namespace std::chrono;
    const auto left = duration_cast<milliseconds>(deadline - steady_clock::now());
    if (left <= milliseconds(0)) return store.check({key});
    try {
        store.wait({key}, left);
        return true;
    } catch (const std::exception&) {  // the store's timeout
        return store.check({key});
    }
}

}  // namespace

void ProcessGroupHostccl::monitoredBarrier(const c10d::BarrierOptions& opts, bool waitAllRanks) {
    using namespace std::chrono;
    const milliseconds limit = opts.timeout == c10d::kUnsetTimeout ? timeout_ : duration_cast<milliseconds>(opts.timeout);
    const auto deadline = steady_clock::now() + limit;
    const std::string prefix = "hostccl/monitored_barrier/" + std::to_string(monitoredBarriers_++) + "/";
    const std::vector<uint8_t> mark{1};
    if (rank_ != 0) {
        store_->set(prefix + std::to_string(rank_), mark);
        TORCH_CHECK(waitFor(*store_, prefix + "done", deadline), "[Rank ", rank_, "]: Rank ", rank_,
                    " successfully reached monitoredBarrier, but received errors while waiting for send/recv from "
                    "rank 0 (no answer within ",
                    limit.count(), " ms)");
        return;
    }
    // Past the deadline only what already arrived counts (store.check), so every rank
    // missing is found within the one timeout.
    std::vector<int> missing;
    for (int r = 1; r < size_; ++r) {
        const std::string key = prefix + std::to_string(r);
        // Out of time before this rank's turn: rank 0's own budget ran out.
        TORCH_CHECK(waitAllRanks || steady_clock::now() < deadline || store_->check({key}),
                    "[Rank 0]: Rank 0 timed out in monitoredBarrier after ", limit.count(), " ms");
        if (waitFor(*store_, key, deadline)) continue;
        missing.push_back(r);
        if (!waitAllRanks) break;
    }
    if (missing.empty()) {
        store_->set(prefix + "done", mark);
        return;
    }
    TORCH_CHECK(false, "[Rank 0]: Rank", missing.size() > 1 ? "s " : " ", joined(missing),
                " failed to pass monitoredBarrier in ", limit.count(), " ms");
}

}  // namespace hostccl::torch_backend
