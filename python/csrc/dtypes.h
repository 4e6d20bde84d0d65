// How torch's element types and reduce ops map onto HCCL's.
#pragma once

#include <ATen/ATen.h>

#include <hccl/hccl_types.h>

#include "torch_compat.h"

namespace hostccl::torch_backend {

// The HCCL type that carries `t`'s elements (bool travels as uint8); throws (a
// Python RuntimeError) for types HCCL has no counterpart of.
HcclDataType hcclTypeOf(const at::Tensor& t);

// How `op` is reduced for elements of `type`: bool's SUM is a logical OR (MAX) and
// its PRODUCT a logical AND (MIN), as NCCL does; AVG reduces with SUM and is divided
// afterwards (see needsAverage); PREMUL_SUM reduces with SUM what was multiplied by
// its factor first (see premultiplied). Bitwise ops throw (see isBitwise).
HcclReduceOp hcclOpOf(const c10d::ReduceOp& op, at::ScalarType type);

// BAND, BOR and BXOR: reduced by ProcessGroupHostccl::bitwiseReduction, not HCCL.
bool isBitwise(const c10d::ReduceOp& op);

// Whether `op` needs the result divided by the group's size afterwards.
inline bool needsAverage(const c10d::ReduceOp& op) { return op.op_ == c10d::ReduceOp::AVG; }

// What a rank contributes to a reduction by `op`: `buf` itself, or for PREMUL_SUM
// `buf` times the op's factor. `buf` is changed in place only when it is not the
// caller's tensor `original` (a staged copy); else a new tensor is made.
at::Tensor premultiplied(const at::Tensor& buf, const at::Tensor& original, const c10d::ReduceOp& op);

// Divides `t` by `size` in place the way torch averages: truncating for integers.
void averageInPlace(at::Tensor& t, int size);

}  // namespace hostccl::torch_backend
