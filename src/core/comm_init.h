// The ways a communicator comes to be. Each ends in Comm::create with a
// full peer table; they differ in how the table is gathered.
#pragma once

#include <vector>

#include "core/comm.h"

namespace hostccl {

// Root rank: opens the rendezvous listener and describes it in `out`.
HcclResult makeRootInfo(HcclRootInfo* out);
HcclResult initFromRootInfo(uint32_t nRanks, const HcclRootInfo* rootInfo, uint32_t rank, const CommSettings& options,
                            Comm** out);
// Rank 0 serves the rendezvous at its server's host_ip (or device_ip) and port
// (host_port, device_port, else HOSTCCL_RANKTABLE_PORT); the job secret is derived
// from the table's contents, which every rank reads.
HcclResult initFromRankTable(const char* path, uint32_t rank, const CommSettings& options, Comm** out);
// Rank, size and meeting point from the launcher's environment (launcher_env.h);
// rank 0 serves the rendezvous. The job secret mixes HOSTCCL_JOB_SECRET (or the
// launcher's job id) with the meeting point and size.
HcclResult initFromLauncherEnv(const CommSettings& options, Comm** out);
// One communicator per device, each initialised on its own thread of this process.
HcclResult initAll(uint32_t ndev, const int32_t* devices, Comm** out);
// The members connect among themselves through the parent's peer table: no new root.
HcclResult createSubComm(const Comm& parent, const std::vector<uint32_t>& parentRanks, uint64_t subCommId,
                         uint32_t subRank, const CommSettings& options, Comm** out);

}  // namespace hostccl
