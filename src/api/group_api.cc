// HcclGroupStart / HcclGroupEnd / HcclGroupStatusGet (api/group.h does the work).
#include "api/group.h"
#include "hccl/hccl.h"

using namespace hostccl;

extern "C" {

HcclResult HcclGroupStart(void) { return api::group::start(); }

HcclResult HcclGroupEnd(void) { return api::group::end(); }

HcclResult HcclGroupStatusGet(bool* isGroupEnabled) {
    if (isGroupEnabled == nullptr) return fail(HCCL_E_PTR, "HcclGroupStatusGet: isGroupEnabled is NULL");
    *isGroupEnabled = api::group::open();
    return HCCL_SUCCESS;
}

}  // extern "C"
