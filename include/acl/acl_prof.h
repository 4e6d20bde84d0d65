/*
 * hostccl: the profiling part of the ACL API (libmsprofiler).
 * SPDX-License-Identifier: Apache-2.0
 *
 * aclprofInit names a directory; between aclprofStart and aclprofStop every
 * communicator of this process records its operators and their transfer steps, and
 * aclprofStop writes them there as hostccl traces (Chrome/Perfetto JSON, the
 * HOSTCCL_TRACE format): <dir>/hostccl_prof.<comm>.rank<r>.<n>.json.
 * The data-type switches select what a device would record; on a host the trace
 * always holds the operators (ACL_PROF_HCCL_TRACE's content) and the other switches
 * are accepted and recorded in the file. AI Core metrics have no host counterpart.
 */
#ifndef ACL_PROF_H_
#define ACL_PROF_H_

#include <acl/acl_base.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MSVP_PROF_API __attribute__((visibility("default")))

#define ACL_PROF_ACL_API 0x0001ULL
#define ACL_PROF_TASK_TIME 0x0002ULL
#define ACL_PROF_AICORE_METRICS 0x0004ULL
#define ACL_PROF_AICPU 0x0008ULL
#define ACL_PROF_L2CACHE 0x0010ULL
#define ACL_PROF_HCCL_TRACE 0x0020ULL
#define ACL_PROF_TRAINING_TRACE 0x0040ULL
#define ACL_PROF_MSPROFTX 0x0080ULL
#define ACL_PROF_RUNTIME_API 0x0100ULL
#define ACL_PROF_FWK_SCHEDULE_L0 0x0200ULL
#define ACL_PROF_TASK_TIME_L0 0x0800ULL
#define ACL_PROF_TASK_MEMORY 0x1000ULL
#define ACL_PROF_TASK_TIME_L2 0x2000ULL
#define ACL_PROF_OP_ATTR 0x4000ULL
#define ACL_PROF_TASK_TIME_L3 0x8000ULL
#define ACL_PROF_FWK_SCHEDULE_L1 0x01000000ULL

#define ACL_PROF_MAX_OP_NAME_LEN 257
#define ACL_PROF_MAX_OP_TYPE_LEN 65

typedef enum {
    ACL_AICORE_ARITHMETIC_UTILIZATION = 0,
    ACL_AICORE_PIPE_UTILIZATION = 1,
    ACL_AICORE_MEMORY_BANDWIDTH = 2,
    ACL_AICORE_L0B_AND_WIDTH = 3,
    ACL_AICORE_RESOURCE_CONFLICT_RATIO = 4,
    ACL_AICORE_MEMORY_UB = 5,
    ACL_AICORE_L2_CACHE = 6,
    ACL_AICORE_PIPE_EXECUTE_UTILIZATION = 7,
    ACL_AICORE_NONE = 0xFF
} aclprofAicoreMetrics;

typedef struct aclprofConfig aclprofConfig;
typedef struct aclprofAicoreEvents aclprofAicoreEvents;

/* The directory is created when missing; length is strlen(path) (at most 4096). */
MSVP_PROF_API aclError aclprofInit(const char *profilerResultPath, size_t length);
/* Stops a running session (writing its traces) and forgets the directory. */
MSVP_PROF_API aclError aclprofFinalize(void);
/* deviceIdList: deviceNums valid device ids; aicoreEvents must be NULL. NULL on bad input. */
MSVP_PROF_API aclprofConfig *aclprofCreateConfig(uint32_t *deviceIdList, uint32_t deviceNums,
                                                 aclprofAicoreMetrics aicoreMetrics,
                                                 const aclprofAicoreEvents *aicoreEvents, uint64_t dataTypeConfig);
MSVP_PROF_API aclError aclprofDestroyConfig(const aclprofConfig *profilerConfig);
/* Needs aclprofInit first; one session at a time. */
MSVP_PROF_API aclError aclprofStart(const aclprofConfig *profilerConfig);
/* profilerConfig must be the one started. */
MSVP_PROF_API aclError aclprofStop(const aclprofConfig *profilerConfig);

#ifdef __cplusplus
}
#endif
#endif /* ACL_PROF_H_ */
