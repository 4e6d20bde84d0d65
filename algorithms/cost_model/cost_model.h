// The cost model of one communicator: the measured or configured parameters
// (cost_params.h) applied to its shape (which ranks share a host, how many cores
// each host has). Algorithms describe themselves as a sequence of steps and local
// work (Algorithm::cost); every estimate is linear in the op's bytes n, so it is
// computed once per communicator and a call's choice is a few multiply-adds.
#pragma once

#include <functional>
#include <vector>

#include "algorithms/cost_model/cost_params.h"

namespace hostccl {

// fixed + perByte * n seconds.
struct Linear {
    double fixed = 0;
    double perByte = 0;
    double at(double bytes) const { return fixed + perByte * bytes; }
    Linear& operator+=(const Linear& o) {
        fixed += o.fixed;
        perByte += o.perByte;
        return *this;
    }
    friend Linear operator+(Linear a, const Linear& b) { return a += b; }
    friend Linear operator*(double k, const Linear& a) { return Linear{k * a.fixed, k * a.perByte}; }
};

class CostModel {
public:
    static constexpr uint32_t kNone = UINT32_MAX;
    using Partner = std::function<uint32_t(uint32_t rank)>;  // kNone: the rank sits the step out

    // `nodeOf`: each rank's host; `coresOf`: each host's cores; `tcpOnly`: links
    // inside a host are TCP too (HOSTCCL_TRANSPORT=tcp); `inProcess`: every rank is a
    // thread of one process (the direct algorithms meet on a board, not over links).
    CostModel(const CostParams& params, std::vector<uint32_t> nodeOf, std::vector<uint32_t> coresOf, bool tcpOnly,
              bool inProcess = false);

    const CostParams& params() const { return params_; }
    uint32_t ranks() const { return static_cast<uint32_t>(nodeOf_.size()); }
    uint32_t nodes() const { return static_cast<uint32_t>(ranksOf_.size()); }
    uint32_t nodeOf(uint32_t r) const { return nodeOf_[r]; }
    const std::vector<uint32_t>& ranksOn(uint32_t node) const { return ranksOf_[node]; }
    uint32_t coresOn(uint32_t node) const { return coresOf_[node]; }
    LinkClass classOf(uint32_t a, uint32_t b) const;
    bool inProcess() const { return inProcess_; }

    // One step in which every rank r with a partner sends share * n bytes to
    // partner(r) while receiving as much: the slowest pair's alpha, plus the bytes
    // at the slowest beta, where ranks of one host crossing to other hosts share
    // its network interface (CostParams::nicBeta), flows between leaf switches share
    // their leaf's uplink (CostParams::hostsPerLeaf) and ranks outnumbering their
    // host's cores share the cores.
    Linear step(const Partner& partner, double share) const;
    // A step whose receivers reduce each chunk as it arrives: the reduction overlaps
    // the transfer, so the slower of the two sets the pace.
    Linear reducingStep(const Partner& partner, double share) const;
    // One step of a ring (partner = the next rank): as step, but the start-ups add up
    // hop after hop around the ring, so the step costs its links' mean alpha.
    Linear ringStep(const Partner& next, double share) const;
    Linear reducingRingStep(const Partner& next, double share) const;
    // share * n reduced / copied on every rank at once.
    Linear reduce(double share) const;
    Linear copy(double share) const;
    // Every rank exchanges one small message with every other (a handshake).
    Linear allPairsHandshake() const;
    // What a direct algorithm's opening (or closing) exchange costs: the all-pairs
    // handshake, or for threads of one process a barrier on their board.
    Linear directHandshake() const;

private:
    double cpuShare(const std::vector<uint32_t>& activeOnNode) const;
    double wireBeta(double flowBeta, uint32_t flows) const;
    double uplinkBeta(const Partner& partner, double flowBeta) const;
    Linear anyStep(const Partner& partner, double share, bool meanAlpha) const;
    Linear withReduction(Linear s, double share) const;

    CostParams params_;
    std::vector<uint32_t> nodeOf_;
    std::vector<std::vector<uint32_t>> ranksOf_;
    std::vector<uint32_t> coresOf_;
    bool tcpOnly_;
    LinkClass netClass_ = LinkClass::Tcp;  // what links between hosts are
    bool inProcess_;
    double crowding_ = 1;  // ranks per core on the most loaded host, at least 1
};

}  // namespace hostccl
