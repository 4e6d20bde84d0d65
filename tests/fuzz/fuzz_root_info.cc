// libFuzzer target: decoding the 4108-byte root info blob a rank receives from
// whoever distributes it (a file, MPI, a launcher).
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "core/bootstrap/root_info.h"
#include "tests/fuzz/fuzz_quiet.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    HcclRootInfo blob;
    std::memset(blob.internal, 0, sizeof blob.internal);
    std::memcpy(blob.internal, data, std::min(size, sizeof blob.internal));
    hostccl::RootInfo info;
    std::string why;
    hostccl::decodeRootInfo(&blob, &info, &why);
    return 0;
}
