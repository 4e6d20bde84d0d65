// Fused compute-communication (as HCCL's MC2 operators): a matrix multiply and a
// collective cut into tiles and pipelined, so the transfer of one tile runs while
// the GEMM of another does. Matrices are row-major float; GEMMs are OpenBLAS's.
// SPDX-License-Identifier: Apache-2.0
//
// Each call is collective over `comm` (every rank, same shapes) and returns when the
// result is complete. The unfused:: forms run the plain sequence (one collective,
// one GEMM) with the same results up to floating-point reassociation.
#pragma once

#include <cstdint>

#include "hostccl/hostccl.hpp"

namespace hostccl {
inline namespace v1 {

struct FusedOptions {
    uint32_t tiles = 4;  // pipeline depth: tiles per rank's block (capped by its rows)
};

// Row-sharded A: C (size*mLocal x n) = [A_0; A_1; ...] (each mLocal x k) * B (k x n).
// This rank's own rows are multiplied first, while the others' are being gathered;
// `gatheredA` (may be null) receives the gathered A (size*mLocal x k).
void allGatherMatMul(Communicator& comm, const float* aLocal, uint64_t mLocal, uint64_t k, const float* b,
                     uint64_t n, float* c, float* gatheredA = nullptr, FusedOptions options = {});

// K-sharded product, reduce-scattered by rows: `out` (m/size x n) is this rank's
// block of sum over ranks of A_r (m x kLocal) * B_r (kLocal x n). m must be a
// multiple of comm.size().
void matMulReduceScatter(Communicator& comm, const float* a, uint64_t m, uint64_t kLocal, const float* b,
                         uint64_t n, float* out, FusedOptions options = {});

// K-sharded product, allreduced: c (m x n) = sum over ranks of A_r * B_r, on every rank.
void matMulAllReduce(Communicator& comm, const float* a, uint64_t m, uint64_t kLocal, const float* b, uint64_t n,
                     float* c, FusedOptions options = {});

namespace unfused {
void allGatherMatMul(Communicator& comm, const float* aLocal, uint64_t mLocal, uint64_t k, const float* b,
                     uint64_t n, float* c, float* gatheredA = nullptr);
void matMulReduceScatter(Communicator& comm, const float* a, uint64_t m, uint64_t kLocal, const float* b,
                         uint64_t n, float* out);
void matMulAllReduce(Communicator& comm, const float* a, uint64_t m, uint64_t kLocal, const float* b, uint64_t n,
                     float* c);
}  // namespace unfused

}  // namespace v1
}  // namespace hostccl
