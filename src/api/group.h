// HcclGroupStart / HcclGroupEnd: operators issued on this thread while a group is
// open are kept and launched at the outermost end. Sends and receives for the same
// communicator and stream become one batch (HcclBatchSendRecv), whose items never
// block each other, so a group of sends and receives to many peers cannot deadlock
// whatever their order. Collectives keep their order among themselves; as in NCCL, a
// group orders nothing between them and the point-to-point batch.
#pragma once

#include <memory>

#include "algorithms/coll_args.h"
#include "common/error.h"
#include "core/comm.h"
#include "runtime/stream.h"

namespace hostccl::api::group {

bool open();  // a group is open on this thread
void defer(Comm* c, std::shared_ptr<runtime::Stream> s, CollArgs args);
HcclResult start();
HcclResult end();  // at the outermost end: launches what was deferred

}  // namespace hostccl::api::group
