// Direct algorithms for ranks that all share memory (one host): after one exchange
// of buffer descriptions (peer_windows.h) each rank reads and writes the other
// ranks' buffers in place, one pass over memory and no staging, then one "done"
// exchange. When some rank's buffers cannot be shared (another process's malloc
// memory, overlapping send and receive buffers) every rank runs `fallback` instead.
#pragma once

#include "algorithms/algorithm.h"

namespace hostccl {

class DirectAlgorithm : public Algorithm {
public:
    explicit DirectAlgorithm(const Algorithm& fallback) : fallback_(fallback) {}
    const char* name() const override { return "direct"; }

protected:
    // Every rank reaches this together (PeerWindows::usable agrees everywhere).
    HcclResult fallBack(Context& ctx) const;

private:
    const Algorithm& fallback_;
};

// Rank r reduces block r of every input and writes it into every output.
class DirectAllReduce final : public DirectAlgorithm {
public:
    using DirectAlgorithm::DirectAlgorithm;
    HcclResult run(Context& ctx) const override;
    Linear cost(const CostModel& model) const override;
};

// Each rank copies every peer's input into its own output.
class DirectAllGather final : public DirectAlgorithm {
public:
    using DirectAlgorithm::DirectAlgorithm;
    HcclResult run(Context& ctx) const override;
    Linear cost(const CostModel& model) const override;
};

// Each rank reduces its own block of every input into its output.
class DirectReduceScatter final : public DirectAlgorithm {
public:
    using DirectAlgorithm::DirectAlgorithm;
    HcclResult run(Context& ctx) const override;
    Linear cost(const CostModel& model) const override;
};

// Each rank copies, from every peer, the block that peer addressed to it.
class DirectAlltoAllV final : public DirectAlgorithm {
public:
    using DirectAlgorithm::DirectAlgorithm;
    HcclResult run(Context& ctx) const override;
    Linear cost(const CostModel& model) const override;
};

// Every non-root copies the root's buffer.
class DirectBroadcast final : public DirectAlgorithm {
public:
    using DirectAlgorithm::DirectAlgorithm;
    HcclResult run(Context& ctx) const override;
    Linear cost(const CostModel& model) const override;
};

// Rank r reduces block r of every input into the root's output.
class DirectReduce final : public DirectAlgorithm {
public:
    using DirectAlgorithm::DirectAlgorithm;
    HcclResult run(Context& ctx) const override;
    Linear cost(const CostModel& model) const override;
};

}  // namespace hostccl
