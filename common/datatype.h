// Facts about HCCL data types and reduce ops: sizes, names, what can be reduced.
#pragma once

#include <cstddef>
#include <cstdint>

#include "hccl/hccl_types.h"

namespace hostccl {

bool dtypeValid(HcclDataType t);
size_t dtypeSize(HcclDataType t);        // 0 when invalid
// Whether an integer read from a caller's struct names a data type.
bool dtypeValueValid(int32_t v);
const char* dtypeName(HcclDataType t);   // "fp32"; "invalid" when unknown
// FP8 and HIF8 only move: they have no reduction semantics on a CPU.
bool dtypeReducible(HcclDataType t);

bool reduceOpValid(HcclReduceOp op);
const char* reduceOpName(HcclReduceOp op);  // "sum"

}  // namespace hostccl
