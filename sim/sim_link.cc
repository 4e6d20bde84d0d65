#include "sim/sim_link.h"

#include "sim/simulation.h"

namespace hostccl::sim {

void SimLink::post(transport::Transfer* t) { sim_.post(rank_, peer(), t); }

transport::Link* SimLinks::get(uint32_t peer, Deadline, HcclResult*, std::string*) {
    std::unique_ptr<SimLink>& l = links_[peer];
    if (!l) l = std::make_unique<SimLink>(sim_, rank_, peer);
    return l.get();
}

transport::Link* SimLinks::existing(uint32_t peer) const {
    auto it = links_.find(peer);
    return it == links_.end() ? nullptr : it->second.get();
}

}  // namespace hostccl::sim
