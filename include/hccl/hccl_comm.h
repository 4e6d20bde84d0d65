/*
 * hostccl: HCCL-compatible collective communication for CPU hosts.
 * SPDX-License-Identifier: Apache-2.0
 *
 * Communicator management of the HCCL C API (the host subset of Huawei's
 * hccl_comm.h; device-side resource headers are not needed on a CPU).
 */
#ifndef HCCL_COMM_H_
#define HCCL_COMM_H_

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include <string.h>
#include <hccl/hccl_types.h>
#include <acl/acl_base.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Fills the 24-byte header and the defaults of every field this header knows.
 * Lives in the header, as in HCCL: the library reads the version back to learn
 * which fields the caller's copy of this struct has. */
static inline void HcclCommConfigInit(HcclCommConfig *config)
{
    if (config == nullptr) {
        return;
    }
    typedef struct {
        size_t size;
        uint32_t magicWord;
        uint32_t version;
        uint64_t reserved;
    } ConfigHeader;
    ConfigHeader *header = (ConfigHeader *)config->reserved;
    header->size = sizeof(HcclCommConfig);
    header->magicWord = HCCL_COMM_CONFIG_MAGIC_WORD;
    header->version = HCCL_COMM_CONFIG_VERSION;
    header->reserved = 0;

    config->hcclBufferSize = HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET;
    config->hcclDeterministic = HCCL_COMM_DETERMINISTIC_CONFIG_NOT_SET;
    config->hcclCommName[0] = '\0';
    config->hcclUdi[0] = '\0';
    config->hcclOpExpansionMode = HCCL_COMM_DEFAULT_OP_EXPANSION_MODE;
    config->hcclRdmaTrafficClass = HCCL_COMM_TRAFFIC_CLASS_CONFIG_NOT_SET;
    config->hcclRdmaServiceLevel = HCCL_COMM_SERVICE_LEVEL_CONFIG_NOT_SET;
    config->hcclWorldRankID = 0;
    config->hcclJobID = 0;
    config->aclGraphZeroCopyEnable = 0;
    config->hcclExecTimeOut = HCCL_COMM_EXECTIMEOUT_CONFIG_NOT_SET;
    config->hcclAlgo[0] = '\0';
    config->hcclRetryEnable[0] = '\0';
    config->hcclRetryParams[0] = '\0';
    config->hcclBufferName[0] = '\0';
    config->hcclQos = HCCL_COMM_QOS_CONFIG_NOT_SET;
    config->hcclSymWinMaxMemSizePerRank = HCCL_COMM_SYMWIN_DEFAULT_MAX_MEM_SIZE_PER_RANK;
    config->hcclChannelSqDepth = HCCL_COMM_CHANNEL_SQ_DEPTH_CONFIG_NOT_SET;
}

/* Returns HCCL_COMM_CONFIG_RESERVED: feature X is supported when the result is > X. */
extern uint32_t HcclGetCommConfigCapability(void);

extern HcclResult HcclCommInitClusterInfo(const char *clusterInfo, uint32_t rank, HcclComm *comm);
extern HcclResult HcclCommInitClusterInfoConfig(const char *clusterInfo, uint32_t rank,
                                                HcclCommConfig *config, HcclComm *comm);
extern HcclResult HcclGetRootInfo(HcclRootInfo *rootInfo);
extern HcclResult HcclCommInitRootInfo(uint32_t nRanks, const HcclRootInfo *rootInfo, uint32_t rank,
                                       HcclComm *comm);
extern HcclResult HcclCommInitRootInfoConfig(uint32_t nRanks, const HcclRootInfo *rootInfo, uint32_t rank,
                                             const HcclCommConfig *config, HcclComm *comm);
extern HcclResult HcclCommInitAll(uint32_t ndev, int32_t *devices, HcclComm *comms);
extern HcclResult HcclCreateSubCommConfig(HcclComm *comm, uint32_t rankNum, uint32_t *rankIds,
                                          uint64_t subCommId, uint32_t subCommRankId,
                                          HcclCommConfig *config, HcclComm *subComm);

extern HcclResult HcclSetConfig(HcclConfig config, HcclConfigValue configValue);
extern HcclResult HcclGetConfig(HcclConfig config, HcclConfigValue *configValue);

extern HcclResult HcclGetRankSize(HcclComm comm, uint32_t *rankSize);
extern HcclResult HcclGetRankId(HcclComm comm, uint32_t *rank);
/* commName must hold at least COMM_NAME_MAX_LENGTH bytes. */
extern HcclResult HcclGetCommName(HcclComm comm, char *commName);
extern HcclResult HcclCommGetHandleWithName(const char *commName, HcclComm *comm);

extern HcclResult HcclBarrier(HcclComm comm, aclrtStream stream);

/* Zero-copy memory (HCCL Test -z). A communicator is told the virtual range its
 * buffers will come from (reserved with aclrtReserveMemAddress), then which parts
 * of it are backed by which physical memory. alignment, offset and flags: 0. */
extern HcclResult HcclCommSetMemoryRange(HcclComm comm, void *baseVirPtr, size_t size, size_t alignment,
                                         uint64_t flags);
extern HcclResult HcclCommUnsetMemoryRange(HcclComm comm, void *baseVirPtr);
extern HcclResult HcclCommActivateCommMemory(HcclComm comm, void *virPtr, size_t size, size_t offset,
                                             aclrtDrvMemHandle handle, uint64_t flags);
extern HcclResult HcclCommDeactivateCommMemory(HcclComm comm, void *virPtr);

/* Groups: operators issued between start and end are launched together at the
 * outermost end; sends and receives to many peers in one group cannot deadlock,
 * whatever their order. Per thread; groups nest. */
extern HcclResult HcclGroupStart(void);
extern HcclResult HcclGroupEnd(void);
extern HcclResult HcclGroupStatusGet(bool *isGroupEnabled);

/* Symmetric-memory windows. Registration is collective over the communicator (every
 * rank registers a window of the same size, flag 1); the windows are exchanged once,
 * so operators whose buffers lie inside them skip the per-op buffer exchange. */
extern HcclResult HcclCommSymWinRegister(HcclComm comm, void *addr, uint64_t size, HcclCommSymWindow *winHandle,
                                         uint32_t flag);
extern HcclResult HcclCommSymWinDeregister(HcclCommSymWindow winHandle);
extern HcclResult HcclCommSymWinGet(HcclComm comm, void *ptr, size_t size, HcclCommSymWindow *winHandle,
                                    size_t *offset);

/* Device-side recovery and NIC switching have no host counterpart: these return
 * HCCL_E_NOT_SUPPORT (docs/api-coverage.md says why). */
extern HcclResult HcclCommSuspend(HcclComm comm);
extern HcclResult HcclCommResume(HcclComm comm);
typedef HcclResult (*HcclCommStateCallback)(HcclComm comm, HcclCommStatePhase state, void *args);
extern HcclResult HcclCommRegCommStateCallback(const char *regName, HcclCommStateCallback cb, void *args);
extern HcclResult HcclCommGetStatus(const char *commId, HcclCommStatus *status);
extern HcclResult HcclCommWorkingDevNicSet(HcclComm comm, uint32_t *ranks, bool *useBackup, uint32_t nRanks);

typedef enum {
    HCCL_OP_EXPANSION_MODE_INVALID = -1,
    HCCL_OP_EXPANSION_MODE_AI_CPU = 0,
    HCCL_OP_EXPANSION_MODE_AIV = 1,
    HCCL_OP_EXPANSION_MODE_HOST = 2,
    HCCL_OP_EXPANSION_MODE_HOST_TS = 3,
    HCCL_OP_EXPANSION_MODE_CCU_MS = 4,
    HCCL_OP_EXPANSION_MODE_CCU_SCHED = 5,
    HCCL_OP_EXPANSION_AIV_ONLY = 6
} HcclOpExpansionMode;

typedef enum { HCCL_CONFIG_TYPE_INVALID = -1, HCCL_CONFIG_TYPE_OP_EXPANSION_MODE = 0 } HcclConfigType;
typedef HcclOpExpansionMode HcclConfigTypeOpExpansionMode;

/* The expansion mode a communicator runs in: always HCCL_OP_EXPANSION_MODE_HOST here
 * (operators are expanded and run by host threads, whatever was asked for). */
extern HcclResult HcclConfigGetInfo(HcclComm comm, HcclConfigType cfgType, uint32_t infoLen, void *info);
extern HcclResult HcclCommDestroy(HcclComm comm);
extern HcclResult HcclGetCommAsyncError(HcclComm comm, HcclResult *asyncError);
extern const char *HcclGetErrorString(HcclResult code);

#ifdef __cplusplus
}
#endif
#endif /* HCCL_COMM_H_ */
