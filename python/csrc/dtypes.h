// How torch's element types and reduce ops map onto HCCL's.
#pragma once

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/Types.hpp>

#include <hccl/hccl_types.h>

namespace hostccl::torch_backend {

// The HCCL type that carries `t`'s elements (bool travels as uint8); throws (a
// Python RuntimeError) for types HCCL has no counterpart of.
HcclDataType hcclTypeOf(const at::Tensor& t);

// How `op` is reduced for elements of `type`: bool's SUM is a logical OR (MAX) and
// its PRODUCT a logical AND (MIN), as NCCL does; AVG reduces with SUM and is divided
// afterwards (see needsAverage). Bitwise ops and PREMUL_SUM throw.
HcclReduceOp hcclOpOf(const c10d::ReduceOp& op, at::ScalarType type);

// Whether `op` needs the result divided by the group's size afterwards.
inline bool needsAverage(const c10d::ReduceOp& op) { return op.op_ == c10d::ReduceOp::AVG; }

// Divides `t` by `size` in place the way torch averages: truncating for integers.
void averageInPlace(at::Tensor& t, int size);

}  // namespace hostccl::torch_backend
