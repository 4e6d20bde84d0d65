// The link to a peer that could not be connected: everything posted on it fails at
// once with the connection's error, so an op reports it through waitAll like any
// transfer's failure (naming the peer) instead of needing a second error path.
#pragma once

#include <string>

#include "transports/link.h"

namespace hostccl::transport {

class FailedLink final : public Link {
public:
    FailedLink(uint32_t peer, uint64_t commId, HcclResult code, std::string why)
        : Link(peer, commId), code_(code), why_(std::move(why)) {}
    LinkClass linkClass() const override { return LinkClass::Tcp; }  // as every pair starts
    const char* kind() const override { return "unconnected"; }
    void post(Transfer* t) override {
        t->error = code_;
        t->errorText = why_;
        t->complete = true;
    }
    bool progress() override { return false; }
    int pollFd() const override { return -1; }
    short pollEvents() const override { return 0; }
    void shutdown(HcclResult, const std::string&) override {}

private:
    const HcclResult code_;
    const std::string why_;
};

}  // namespace hostccl::transport
