// Gradient compression for data-parallel training: each compressor averages a
// float buffer over a communicator's ranks with less data on the wire. Each is a
// drop-in for the GradientBucketer (hostccl/bucketing.hpp).
// SPDX-License-Identifier: Apache-2.0
//
//   "none"        fp32 allreduce (the reference)
//   "fp16"/"bf16" scaled by 1/n, cast, allreduced in 16 bits, cast back
//   "topk[:r]"    the fraction r (default 0.01) of largest-magnitude entries as
//                 (index, value) pairs, allgathered; the rest is kept as error
//                 feedback and added to the next step's gradient
//   "sign"        1 bit per entry plus one scale (the mean magnitude) per rank,
//                 allgathered; error feedback as for topk
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "hostccl/hostccl.hpp"

namespace hostccl {
inline namespace v1 {

// An averaging in flight; finish() waits for it and writes the average into the
// buffer it was started on.
class PendingReduction {
public:
    virtual ~PendingReduction() = default;
    virtual void finish() = 0;
    // The collective finish() waits for: complete once it is, finish() then only
    // turns its result into the average (callers that wait elsewhere poll this).
    virtual Work collective() const = 0;
    // Milliseconds the collective ran (after finish()).
    virtual double runMs() const = 0;
};

class GradientCompressor {
public:
    virtual ~GradientCompressor() = default;
    virtual std::string name() const = 0;
    // Starts averaging `buffer` over `comm`. `key` names the buffer across steps (it
    // selects the error-feedback state); the buffer must stay alive until finish().
    virtual std::unique_ptr<PendingReduction> start(Communicator& comm, std::span<float> buffer, size_t key) = 0;

    // Bytes this rank has sent so far, counted as a bandwidth-optimal algorithm sends
    // them (allreduce of B bytes: 2(n-1)/n * B; allgather of b bytes a rank: (n-1) * b),
    // and the uncompressed fp32 equivalent.
    uint64_t wireBytes() const { return wireBytes_; }
    uint64_t fp32WireBytes() const { return fp32WireBytes_; }

protected:
    void countAllReduce(uint64_t bytes, uint64_t floats, uint32_t n);
    void countAllGather(uint64_t bytesPerRank, uint64_t floats, uint32_t n);

private:
    uint64_t wireBytes_ = 0;
    uint64_t fp32WireBytes_ = 0;
};

// "none", "fp16", "bf16", "topk", "topk:0.05", "sign"; throws Error(HCCL_E_PARA) otherwise.
std::unique_ptr<GradientCompressor> makeCompressor(const std::string& spec);

}  // namespace v1
}  // namespace hostccl
