/*
 * hostccl: HCCL-compatible collective communication for CPU hosts.
 * SPDX-License-Identifier: Apache-2.0
 *
 * hostccl's own C extensions to the HCCL API.
 */
#ifndef HOSTCCL_HOSTCCL_H_
#define HOSTCCL_HOSTCCL_H_

#include <stdint.h>
#include <hccl/hccl_types.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Creates the world communicator of a job started by a launcher: rank, size and
 * local rank come from Open MPI (OMPI_COMM_WORLD_*), MPICH/hydra (PMI_*), Slurm
 * (SLURM_*) or torchrun (RANK, WORLD_SIZE, LOCAL_RANK); the ranks meet at
 * HOSTCCL_ROOT_ADDR=host:port (or MASTER_ADDR/MASTER_PORT), where rank 0 listens.
 * Set HOSTCCL_JOB_SECRET on networks shared with other users. If the calling thread
 * has no device set, the local rank's device is selected. */
extern HcclResult HostcclCommInitFromEnv(HcclComm *comm);

/* What HostcclCommInitFromEnv would use; HCCL_E_NOT_FOUND when no launcher is found. */
extern HcclResult HostcclGetLauncherRank(uint32_t *rank, uint32_t *size, uint32_t *localRank);

/* Describes the communicator for people, as NUL-terminated text in `text` (cut to
 * `capacity` bytes): its hosts (cores and NUMA nodes from hwloc) and their ranks, the
 * link kind between every pair of ranks, and the algorithm chosen per collective and
 * size. The perf tools print it with --topology. */
extern HcclResult HostcclCommDescribe(HcclComm comm, char *text, uint64_t capacity);

#ifdef __cplusplus
}
#endif
#endif /* HOSTCCL_HOSTCCL_H_ */
