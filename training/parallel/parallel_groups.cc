// Builds the dp x tp x pp groups: assigns world ranks to slots host by host, cuts
// the slots into groups, and makes one sub-communicator per group kind.
#include <algorithm>
#include <map>
#include <string>

#include "hostccl/parallel.hpp"

namespace hostccl {
inline namespace v1 {
namespace {

// Group ids passed to split(): one range per kind, so no two groups share an id.
enum GroupKind : uint64_t { kTensor = 1, kData = 2, kPipeline = 3 };
uint64_t groupId(GroupKind kind, uint32_t index) { return (uint64_t(kind) << 32) | index; }

// World ranks in slot order: by host (hosts in order of their lowest rank), then rank.
// When a host's rank count is not a multiple of tp, host order cannot keep groups
// together anyway, and plain rank order is used.
std::vector<uint32_t> slotOrder(Communicator& world, uint32_t tp, bool* tpWithinHost) {
    const uint32_t n = world.size();
    std::vector<uint32_t> host(n);
    std::map<uint32_t, uint32_t> perHost;
    for (uint32_t r = 0; r < n; ++r) ++perHost[host[r] = world.hostOf(r)];
    bool divisible = std::all_of(perHost.begin(), perHost.end(), [&](auto& h) { return h.second % tp == 0; });
    std::vector<uint32_t> order(n);
    for (uint32_t r = 0; r < n; ++r) order[r] = r;
    if (divisible) std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) { return host[a] < host[b]; });
    *tpWithinHost = true;
    for (uint32_t s = 0; s < n; s += tp)
        for (uint32_t k = 1; k < tp; ++k) *tpWithinHost &= host[order[s + k]] == host[order[s]];
    return order;
}

uint32_t indexOf(const std::vector<uint32_t>& members, uint32_t rank) {
    return static_cast<uint32_t>(std::find(members.begin(), members.end(), rank) - members.begin());
}

}  // namespace

ParallelGroups::ParallelGroups(Communicator& world, uint32_t dp, uint32_t tp, uint32_t pp) : dp_(dp), tp_(tp), pp_(pp) {
    const uint32_t n = world.size(), me = world.rank();
    if (dp == 0 || tp == 0 || pp == 0 || uint64_t(dp) * tp * pp != n)
        throw Error(HCCL_E_PARA, "ParallelGroups: dp " + std::to_string(dp) + " x tp " + std::to_string(tp) + " x pp " +
                                     std::to_string(pp) + " is not the world size " + std::to_string(n));
    std::vector<uint32_t> order = slotOrder(world, tp, &tpWithinHost_);
    const uint32_t slot = indexOf(order, me);
    const uint32_t t = slot % tp, d = (slot / tp) % dp, p = slot / (tp * dp);
    auto at = [&](uint32_t ti, uint32_t di, uint32_t pi) { return order[pi * tp * dp + di * tp + ti]; };
    for (uint32_t k = 0; k < tp; ++k) tpMembers_.push_back(at(k, d, p));
    for (uint32_t k = 0; k < dp; ++k) dpMembers_.push_back(at(t, k, p));
    for (uint32_t k = 0; k < pp; ++k) ppMembers_.push_back(at(t, d, k));
    for (auto* m : {&tpMembers_, &dpMembers_, &ppMembers_}) std::sort(m->begin(), m->end());
    tpIndex_ = indexOf(tpMembers_, me);
    dpIndex_ = indexOf(dpMembers_, me);
    ppIndex_ = indexOf(ppMembers_, me);
    // Each group is named by the coordinates it does not span, so ids differ across groups.
    tpComm_.emplace(world.split(tpMembers_, groupId(kTensor, p * dp + d)));
    dpComm_.emplace(world.split(dpMembers_, groupId(kData, p * tp + t)));
    ppComm_.emplace(world.split(ppMembers_, groupId(kPipeline, d * tp + t)));
}

uint32_t ParallelGroups::stageNeighbour(int step) const {
    int64_t stage = int64_t(ppIndex_) + step;
    if (stage < 0 || stage >= int64_t(pp_))
        throw Error(HCCL_E_PARA, "ParallelGroups: stage " + std::to_string(ppIndex_) + " has no " +
                                     (step > 0 ? "next" : "previous") + " stage");
    return static_cast<uint32_t>(stage);
}

Work ParallelGroups::sendToNextStage(const void* buf, uint64_t count, HcclDataType dtype) {
    return ppComm_->send(buf, count, dtype, stageNeighbour(+1));
}
Work ParallelGroups::recvFromPreviousStage(void* buf, uint64_t count, HcclDataType dtype) {
    return ppComm_->recv(buf, count, dtype, stageNeighbour(-1));
}
Work ParallelGroups::sendToPreviousStage(const void* buf, uint64_t count, HcclDataType dtype) {
    return ppComm_->send(buf, count, dtype, stageNeighbour(-1));
}
Work ParallelGroups::recvFromNextStage(void* buf, uint64_t count, HcclDataType dtype) {
    return ppComm_->recv(buf, count, dtype, stageNeighbour(+1));
}

}  // namespace v1
}  // namespace hostccl
