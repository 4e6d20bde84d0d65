/*
 * hostccl: host runtime shim with the ACL API (libascendcl).
 * SPDX-License-Identifier: Apache-2.0
 */
#ifndef ACL_H_
#define ACL_H_

#include <acl/acl_base.h>
#include <acl/acl_rt.h>

#ifdef __cplusplus
extern "C" {
#endif

/* configPath may be NULL. A second aclInit returns ACL_ERROR_REPEAT_INITIALIZE. */
ACL_FUNC_VISIBILITY aclError aclInit(const char *configPath);
ACL_FUNC_VISIBILITY aclError aclFinalize(void);

#ifdef __cplusplus
}
#endif
#endif /* ACL_H_ */
