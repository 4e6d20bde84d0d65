#include "algorithms/cost_model/cost_model.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace hostccl {

CostModel::CostModel(const CostParams& params, std::vector<uint32_t> nodeOf, std::vector<uint32_t> coresOf,
                     bool tcpOnly, bool inProcess)
    : params_(params), nodeOf_(std::move(nodeOf)), coresOf_(std::move(coresOf)), tcpOnly_(tcpOnly),
      inProcess_(inProcess) {
    uint32_t nodes = 0;
    for (uint32_t n : nodeOf_) nodes = std::max(nodes, n + 1);
    ranksOf_.resize(nodes);
    coresOf_.resize(nodes, 1);
    for (uint32_t r = 0; r < ranks(); ++r) ranksOf_[nodeOf_[r]].push_back(r);
    std::vector<uint32_t> all(nodes);
    for (uint32_t n = 0; n < nodes; ++n) all[n] = static_cast<uint32_t>(ranksOf_[n].size());
    crowding_ = cpuShare(all);
    // The links between hosts are TCP unless only another class that joins hosts
    // (RDMA) was measured or given (the probe times the links the communicator has).
    auto known = [&](LinkClass c) { return std::strcmp(params_.linkSource[size_t(c)], "default") != 0; };
    if (!known(LinkClass::Tcp))
        for (size_t c = 0; c < kLinkClasses; ++c)
            if (linkClassInfo(LinkClass(c)).betweenHosts && known(LinkClass(c))) netClass_ = LinkClass(c);
    // Ranks outnumbering cores wait for the scheduler at every step.
    if (crowding_ > 1)
        for (LinkCost& l : params_.link)
            if (l.alphaBusy > 0) l.alpha = l.alphaBusy;
}

LinkClass CostModel::classOf(uint32_t a, uint32_t b) const {
    if (tcpOnly_) return LinkClass::Tcp;
    return nodeOf_[a] == nodeOf_[b] ? LinkClass::Shm : netClass_;
}

// How many ranks each core of the busiest host carries (at least 1).
double CostModel::cpuShare(const std::vector<uint32_t>& activeOnNode) const {
    double share = 1;
    for (size_t n = 0; n < activeOnNode.size(); ++n)
        share = std::max(share, double(activeOnNode[n]) / std::max(1u, coresOf_[n]));
    return share;
}

// `flows` flows of one host's ranks crossing to other hosts at once, each no faster
// than `flowBeta`: they share the host's network interface where its rate is known,
// else one flow is taken to fill it.
double CostModel::wireBeta(double flowBeta, uint32_t flows) const {
    if (params_.nicBeta > 0) return std::max(flowBeta, flows * params_.nicBeta);
    return flowBeta * flows;
}

// Flows crossing between leaf switches at once share each leaf's uplink (out of the
// sender's leaf, into the receiver's): hostsPerLeaf NICs' rate over the
// oversubscription. At 1:1 the uplink is never tighter than the NICs below it; at 2:1
// every rank crossing at once (Rabenseifner's first steps) halves each flow's rate.
double CostModel::uplinkBeta(const Partner& partner, double flowBeta) const {
    const uint32_t perLeaf = params_.hostsPerLeaf;
    if (perLeaf == 0 || nodes() <= perLeaf) return 0;
    const double nicBeta = params_.nicBeta > 0 ? params_.nicBeta : flowBeta;
    std::vector<uint32_t> out(nodes() / perLeaf + 1, 0), in(out.size(), 0);
    for (uint32_t r = 0; r < ranks(); ++r) {
        const uint32_t q = partner(r);
        if (q == kNone || q == r) continue;
        const uint32_t from = nodeOf_[r] / perLeaf, to = nodeOf_[q] / perLeaf;
        if (from == to) continue;
        out[from]++;
        in[to]++;
    }
    const uint32_t flows = std::max(*std::max_element(out.begin(), out.end()), *std::max_element(in.begin(), in.end()));
    return flows * nicBeta * params_.leafOversubscription / perLeaf;
}

// The probe measures with every rank busy, so its numbers already carry the
// crowding of a full step; a step that keeps fewer ranks busy runs faster in the
// same proportion, down to one rank per core.
Linear CostModel::step(const Partner& partner, double share) const { return anyStep(partner, share, false); }

// A ring's ranks each go on as soon as their predecessor's block arrives, so the
// step's start-up is paid hop after hop around the ring: over its n - 1 steps the
// chain crosses every link about once, so a step costs the mean alpha of its links
// (7 shared-memory hops and one between hosts: an eighth of the network's alpha).
Linear CostModel::ringStep(const Partner& next, double share) const { return anyStep(next, share, true); }

Linear CostModel::anyStep(const Partner& partner, double share, bool meanAlpha) const {
    std::vector<uint32_t> active(nodes(), 0), crossing(nodes(), 0);
    double alpha = 0, alphaSum = 0, shmBeta = 0, netBeta = 0;
    uint32_t pairs = 0;
    for (uint32_t r = 0; r < ranks(); ++r) {
        const uint32_t q = partner(r);
        if (q == kNone || q == r) continue;
        const LinkClass c = classOf(r, q);
        const LinkCost& l = params_.of(c);
        alpha = std::max(alpha, l.alpha);
        alphaSum += l.alpha;
        ++pairs;
        active[nodeOf_[r]]++;
        if (c == LinkClass::Shm) {
            shmBeta = std::max(shmBeta, l.beta);
        } else {
            crossing[nodeOf_[r]]++;
            netBeta = std::max(netBeta, l.beta);
        }
    }
    const double cpu = cpuShare(active) / crowding_;
    const uint32_t sharing = *std::max_element(crossing.begin(), crossing.end());
    const double beta = std::max({shmBeta * cpu, wireBeta(netBeta, sharing),
                                  netBeta > 0 ? uplinkBeta(partner, netBeta) : 0.0});
    if (meanAlpha && pairs > 0) alpha = alphaSum / pairs;
    return Linear{alpha * (shmBeta > 0 && netBeta == 0 ? cpu : 1.0), share * beta};
}

Linear CostModel::reducingStep(const Partner& partner, double share) const {
    return withReduction(step(partner, share), share);
}

Linear CostModel::reducingRingStep(const Partner& next, double share) const {
    return withReduction(ringStep(next, share), share);
}

Linear CostModel::withReduction(Linear s, double share) const {
    if (s.fixed == 0 && s.perByte == 0) return s;  // nobody takes part
    s.perByte = std::max(s.perByte, reduce(share).perByte);
    return s;
}

Linear CostModel::reduce(double share) const { return Linear{0, share * params_.gamma * crowding_}; }

Linear CostModel::copy(double share) const { return Linear{0, share * params_.copyBeta * crowding_}; }

// Each rank posts a message to every peer at once: measured on one host; otherwise
// one start-up time plus the per-message work of the others.
Linear CostModel::allPairsHandshake() const {
    if (ranks() < 2) return {};
    if (params_.handshake > 0 && nodes() == 1 && !tcpOnly_) return Linear{params_.handshake, 0};
    const LinkClass worst = tcpOnly_ ? LinkClass::Tcp : nodes() > 1 ? netClass_ : LinkClass::Shm;
    return Linear{params_.of(worst).alpha * (1 + 0.25 * (ranks() - 2)), 0};
}

// Unmeasured, a barrier of threads is a wake-up per level of a tree of them.
Linear CostModel::directHandshake() const {
    if (!inProcess_) return allPairsHandshake();
    if (params_.boardBarrier > 0) return Linear{params_.boardBarrier, 0};
    return Linear{params_.of(LinkClass::Shm).alpha * (1 + std::log2(std::max(2u, ranks()))), 0};
}

}  // namespace hostccl
