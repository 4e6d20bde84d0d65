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
extern HcclResult HcclCommDestroy(HcclComm comm);
extern HcclResult HcclGetCommAsyncError(HcclComm comm, HcclResult *asyncError);
extern const char *HcclGetErrorString(HcclResult code);

#ifdef __cplusplus
}
#endif
#endif /* HCCL_COMM_H_ */
