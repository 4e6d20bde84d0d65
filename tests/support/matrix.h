// The collective test matrix as rank-local cases: a case runs on one rank, fills
// that rank's inputs, calls the operator, synchronises and checks that rank's
// outputs against exact expected values. Every rank runs the same cases in the
// same order, so the matrix runs unchanged with ranks as threads (collectives_test)
// or as processes (multiprocess worker).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "hccl/hccl.h"
#include "hostccl/hostccl.h"

namespace hostccl::test {

struct RankContext {
    uint32_t rank;
    uint32_t size;
    HcclComm comm;
    aclrtStream stream;
};

struct MatrixCase {
    std::string name;
    // "" on success, else what went wrong on this rank.
    std::function<std::string(const RankContext&)> run;
    bool large = false;  // the multi-megabyte count
    int dtype = -1;      // the HcclDataType it runs, -1 for none (barriers)
};

// One element type per size: what a transport or an algorithm does differently per
// type is the element size (block edges, alignment), so the variants of the matrix
// (TCP, direct, processes, forced algorithms) run these; every type runs in the
// threads' matrix under the selector's choice and in the reduction kernels' tests.
extern const char* const kOneTypePerSize;  // "int8,fp16,fp32,int64,int128"
// True when the case has no dtype or its dtype is in the comma-separated `dtypes`
// ("" = every type).
bool caseInTypes(const MatrixCase& c, const std::string& dtypes);

// Families: AllReduce, Reduce, ReduceScatter, ReduceScatterV, Broadcast, AllGather,
// AllGatherV, Scatter, AlltoAll, AlltoAllV, AlltoAllVC, SendRecv, BatchSendRecv, RecvAny
// (HostcclRecvAny), Barrier.
const std::vector<std::string>& matrixFamilies();
// `withLarge`: include the multi-megabyte case (several pipeline chunks per rank).
std::vector<MatrixCase> matrixCases(const std::string& family, uint32_t nranks, bool withLarge = true);

}  // namespace hostccl::test
