// A link of the simulated transport: posting hands the transfer to the simulation,
// which completes it on its virtual clock; there is nothing to poll.
#pragma once

#include <memory>
#include <unordered_map>

#include "algorithms/context.h"
#include "transports/link.h"

namespace hostccl::sim {

class Simulation;

class SimLink final : public transport::Link {
public:
    SimLink(Simulation& sim, uint32_t rank, uint32_t peer) : Link(peer, 1), sim_(sim), rank_(rank) {}
    LinkClass linkClass() const override { return LinkClass::Tcp; }  // the platform prices it, not the class
    const char* kind() const override { return "sim"; }
    void post(transport::Transfer* t) override;
    bool progress() override { return false; }
    int pollFd() const override { return -1; }
    short pollEvents() const override { return 0; }
    void shutdown(HcclResult, const std::string&) override {}
    uint32_t rank() const { return rank_; }

private:
    Simulation& sim_;
    const uint32_t rank_;
};

// One rank's links, made on first use like the real table's.
class SimLinks final : public PeerLinks {
public:
    SimLinks(Simulation& sim, uint32_t rank) : sim_(sim), rank_(rank) {}
    transport::Link* get(uint32_t peer, Deadline, HcclResult*, std::string*) override;
    transport::Link* existing(uint32_t peer) const override;

private:
    Simulation& sim_;
    const uint32_t rank_;
    std::unordered_map<uint32_t, std::unique_ptr<SimLink>> links_;
};

}  // namespace hostccl::sim
