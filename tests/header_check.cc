// Compiled (not run) under several language standards: the public headers must
// build cleanly wherever HCCL's own headers do.
#include "acl/acl.h"
#include "hccl/hccl.h"

int header_check_config_size() {
    HcclCommConfig config;
    HcclCommConfigInit(&config);
    static_assert(sizeof(HcclRootInfo) == 4108, "root info size");
    static_assert(sizeof(HcclCommConfig) == 2248, "config v11 size");
    static_assert(sizeof(HcclSendRecvItem) == 32, "send/recv item size");
    return static_cast<int>(config.hcclBufferSize != 0);
}
