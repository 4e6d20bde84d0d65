// Frames of the health channels (a rank and its ring neighbours: heartbeats and
// goodbyes) and of failure notices (failures and aborts, spread to every rank over a
// binomial tree rooted at the rank that saw them: notice_broadcast.h). A frame is a
// fixed 32-byte header and at most kMaxHealthText bytes of text. Everything read
// from the wire is checked before use; a frame that fails the check ends the channel.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "hccl/hccl_types.h"

namespace hostccl::health {

enum class FrameType : uint8_t {
    Heartbeat = 1,  // "still here"
    Failure = 2,    // this rank's communicator failed: code, culprit, reason
    Abort = 3,      // this rank aborted the communicator
    Goodbye = 4,    // this rank destroyed the communicator: its close is not a death
};

struct Frame {
    FrameType type = FrameType::Heartbeat;
    HcclResult code = HCCL_SUCCESS;
    int32_t culprit = -1;  // the rank the sender blames (-1: none)
    uint64_t seq = 0;      // the sender's last collective sequence number
    uint32_t origin = 0;   // notices: the rank whose notice this is
    uint32_t span = 0;     // notices: the receiver forwards to the next span - 1 ranks after it (tree order)
    std::string text;
};

constexpr size_t kHealthHeaderBytes = 32;
constexpr size_t kMaxHealthText = 1024;

std::string encodeFrame(const Frame& f);

enum class Decoded { NeedMore, Ok, Bad };
// Decodes the frame at the start of `data`: Ok sets `out` and `used`; Bad says why
// in `why`. `ranks` bounds the culprit.
Decoded decodeFrame(const char* data, size_t len, uint32_t ranks, Frame* out, size_t* used, std::string* why);

}  // namespace hostccl::health
