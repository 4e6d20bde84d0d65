// The fold that lets power-of-two algorithms run on any rank count (MPICH's scheme):
// with p2 the largest power of two <= n and extra = n - p2, each even rank below
// 2*extra hands its vector to the odd rank above it and sits out until the result
// comes back; the p2 survivors work as virtual ranks 0..p2-1.
#pragma once

#include <cstddef>
#include <cstdint>

#include "algorithms/context.h"
#include "algorithms/cost_model/cost_model.h"

namespace hostccl {

struct Fold {
    explicit Fold(uint32_t n, uint32_t rank) : rank(rank) {
        p2 = 1;
        while (p2 * 2 <= n) p2 *= 2;
        extra = n - p2;
    }
    bool sitsOut() const { return rank < 2 * extra && rank % 2 == 0; }
    bool absorbs() const { return rank < 2 * extra && rank % 2 == 1; }  // takes rank-1's vector
    uint32_t virtualRank() const { return rank < 2 * extra ? rank / 2 : rank - extra; }
    uint32_t realRank(uint32_t virt) const { return virt < extra ? virt * 2 + 1 : virt + extra; }

    uint32_t rank;
    uint32_t p2;
    uint32_t extra;
};

// Before the power-of-two part, on `buf` (the whole vector): a rank that sits out
// hands its vector up and waits for the result (`*finished` is then true: nothing
// else to do); the rank above reduces it in.
HcclResult foldIn(Context& ctx, const Fold& fold, char* buf, size_t bytes, bool* finished);
// After it: the absorbing rank hands the result back down.
HcclResult foldOut(Context& ctx, const Fold& fold, const char* buf, size_t bytes);

// For the cost model, among `n` ranks: the fold's pairs (rank 2i with 2i+1, for
// i < extra; the rest sit it out), and each surviving rank's partner across bit
// `mask` of its virtual rank (ranks folded away sit it out).
CostModel::Partner foldPairs(uint32_t n);
CostModel::Partner acrossBit(uint32_t n, uint32_t mask);

}  // namespace hostccl
