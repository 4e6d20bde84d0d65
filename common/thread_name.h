// Names hostccl's own threads so `top -H`, `perf sched`, gdb and /proc show which
// thread is a stream's worker and which a health monitor (Linux keeps 15 bytes).
#pragma once

namespace hostccl {

void nameThisThread(const char* name);

}  // namespace hostccl
