// Shared by the fuzz targets: the library logs every malformed input it rejects,
// which would drown the fuzzer's own output, so logging is off.
#pragma once

#include <cstdlib>

extern "C" int LLVMFuzzerInitialize(int*, char***) {
    setenv("ASCEND_GLOBAL_LOG_LEVEL", "4", 1);
    return 0;
}
