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
#include <acl/acl_base.h>

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

/* The rank, size and local rank HostcclCommInitFromEnv would use (whether or not a
 * meeting point is set); HCCL_E_NOT_FOUND when no launcher's variables are found. */
extern HcclResult HostcclGetLauncherRank(uint32_t *rank, uint32_t *size, uint32_t *localRank);

/* The meeting point HostcclCommInitFromEnv would use, as a NUL-terminated host name or
 * address in `host` (`capacity` bytes) and a port: HOSTCCL_ROOT_ADDR, else MASTER_ADDR
 * and MASTER_PORT, else under srun the step's first node and the first of
 * SLURM_STEP_RESV_PORTS or a port derived from SLURM_JOB_ID and SLURM_STEP_ID (two
 * steps of one job never share it). HCCL_E_NOT_FOUND when there is none
 * (HostcclCommInitFromEnv then says what to set); HCCL_E_PARA when the host does not
 * fit in `capacity`. */
extern HcclResult HostcclGetLauncherMeetingPoint(char *host, uint64_t capacity, uint32_t *port);

/* Describes the communicator for people, as NUL-terminated text in `text` (cut to
 * `capacity` bytes): its hosts (cores and NUMA nodes from hwloc) and their ranks, the
 * link kind between every pair of ranks, and the algorithm chosen per collective and
 * size. The perf tools print it with --topology. */
extern HcclResult HostcclCommDescribe(HcclComm comm, char *text, uint64_t capacity);

/* The host of `rank`: hosts are numbered 0, 1, ... in the order of their lowest rank,
 * so ranks with equal numbers share a machine (and shared memory). For placing groups,
 * e.g. tensor-parallel groups inside a host. */
extern HcclResult HostcclCommGetRankHost(HcclComm comm, uint32_t rank, uint32_t *hostIndex);

/* Fault tolerance. A communicator fails as a whole: when a peer dies (its
 * connections close), stops answering heartbeats (HOSTCCL_HEARTBEAT_TIMEOUT), runs a
 * different op, or an op times out (HCCL_EXEC_TIMEOUT), the op in flight fails on every
 * rank within moments, with the rank to blame named in the log; HcclGetCommAsyncError
 * then reports the code and every later call on the communicator fails at once. */

/* The communicator's failure, if any: its code (HCCL_SUCCESS when none), the rank it
 * is blamed on (-1 when none: a local timeout, an abort) and the reason as
 * NUL-terminated text cut to `capacity` bytes (`reason` may be NULL). Every rank
 * names the same culprit for a dead or stopped peer, so the survivors can agree on
 * whom to exclude when they shrink. */
extern HcclResult HostcclCommGetFailure(HcclComm comm, HcclResult *code, int32_t *rank, char *reason,
                                        uint64_t capacity);

/* Aborts and destroys `comm`: the op in flight and every queued one fail (within
 * 100 ms), the peers are told, and the handle becomes invalid. Callable from any
 * thread, also while another thread waits on the communicator's stream; the process
 * can go on to create new communicators. Ops that ended because of the abort report
 * HCCL_E_INTERNAL here and HCCL_E_REMOTE on the peers. */
extern HcclResult HostcclCommAbort(HcclComm comm);

/* Builds, from a communicator (failed or not), one of the ranks that remain when
 * `excludeRanks` (`excludeCount` ranks of `comm`) are left out; ranks keep their order
 * (new rank = position among the survivors). Every survivor calls it with the same
 * set; no new root info is needed. `config` (may be NULL) sets the new communicator's
 * options. The old communicator is still the caller's to destroy. HCCL_E_PARA when the
 * set names this rank, a rank twice or a rank outside the communicator. */
extern HcclResult HostcclCommShrink(HcclComm comm, const uint32_t *excludeRanks, uint32_t excludeCount,
                                    HcclCommConfig *config, HcclComm *newComm);

/* HcclCreateSubCommConfig without its ordering rule: `rankIds` lists `rankNum`
 * distinct ranks of `comm`, this rank among them, in the order of their ranks in the
 * new communicator (any order: as torch.distributed's split_group and DeviceMesh
 * give them). Every member passes the same list and `subCommId`, which must differ
 * between the communicators built from one parent; ranks not listed do not call it.
 * No new root info; `config` may be NULL. HCCL_E_PARA when a rank is outside `comm`,
 * listed twice, or this rank is not listed. */
extern HcclResult HostcclCommSplit(HcclComm comm, uint32_t rankNum, const uint32_t *rankIds, uint64_t subCommId,
                                   HcclCommConfig *config, HcclComm *subComm);

/* Sets the exec timeout (HCCL_EXEC_TIMEOUT's meaning, in seconds; 0 = no limit) of
 * `comm`'s ops that start from now on; ops already running keep theirs. For
 * torch.distributed's ProcessGroup setTimeout. HCCL_E_PARA when negative. */
extern HcclResult HostcclCommSetExecTimeout(HcclComm comm, int32_t seconds);

/* Receives `count` elements of `dataType` from whichever rank sends to this one next
 * (HcclSend, or a send item of HcclBatchSendRecv; count and type must match it, as
 * for HcclRecv) and writes that rank to `*srcRank` when the receive completes on
 * `stream` (read it after synchronising). Messages between two ranks still arrive in
 * the order sent. Bounded by HCCL_EXEC_TIMEOUT like every op. Not inside
 * HcclGroupStart/HcclGroupEnd (HCCL_E_NOT_SUPPORT). For MPI_ANY_SOURCE-style code
 * and torch.distributed's recv without a source. */
extern HcclResult HostcclRecvAny(void *recvBuf, uint64_t count, HcclDataType dataType, uint32_t *srcRank,
                                 HcclComm comm, aclrtStream stream);

#ifdef __cplusplus
}
#endif
#endif /* HOSTCCL_HOSTCCL_H_ */
