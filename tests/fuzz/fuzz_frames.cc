// libFuzzer target: the frame decoders of an open connection: the data links'
// message header (checked against what the receiver posted) and a stream of
// health-channel frames.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "core/health/health_frame.h"
#include "tests/fuzz/fuzz_quiet.h"
#include "transports/link.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    using namespace hostccl;
    if (size >= sizeof(transport::WireHeader)) {
        transport::WireHeader h;
        std::memcpy(&h, data, sizeof h);
        transport::MsgTag posted;
        posted.seq = 7;
        posted.count = 256;
        transport::headerMismatch(h, 42, posted, 1024);
    }
    const char* bytes = reinterpret_cast<const char*>(data);
    size_t off = 0;
    while (off < size) {
        health::Frame f;
        size_t used = 0;
        std::string why;
        auto d = health::decodeFrame(bytes + off, size - off, 8, &f, &used, &why);
        if (d != health::Decoded::Ok) break;
        if (used < health::kHealthHeaderBytes || used > size - off || f.text.size() > health::kMaxHealthText)
            __builtin_trap();
        off += used;
    }
    return 0;
}
