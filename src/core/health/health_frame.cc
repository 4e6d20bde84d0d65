#include "core/health/health_frame.h"

#include <cstring>

namespace hostccl::health {

namespace {
constexpr uint32_t kMagic = 0x48544c48;  // "HLTH"
constexpr uint8_t kFrameVersion = 2;

struct Header {
    uint32_t magic;
    uint8_t type;
    uint8_t version;
    uint16_t textBytes;
    uint32_t code;
    int32_t culprit;
    uint64_t seq;
    uint32_t origin;
    uint32_t span;
};
static_assert(sizeof(Header) == kHealthHeaderBytes, "wire layout");

bool knownCode(uint32_t c) { return c < HCCL_E_RESERVED || c == HCCL_E_IN_STATUS; }
}  // namespace

std::string encodeFrame(const Frame& f) {
    const size_t text = std::min(f.text.size(), kMaxHealthText);
    Header h{kMagic, static_cast<uint8_t>(f.type), kFrameVersion, static_cast<uint16_t>(text),
             static_cast<uint32_t>(f.code), f.culprit, f.seq, f.origin, f.span};
    std::string out(reinterpret_cast<const char*>(&h), sizeof h);
    out.append(f.text.data(), text);
    return out;
}

Decoded decodeFrame(const char* data, size_t len, uint32_t ranks, Frame* out, size_t* used, std::string* why) {
    if (len < sizeof(Header)) return Decoded::NeedMore;
    Header h;
    std::memcpy(&h, data, sizeof h);
    if (h.magic != kMagic || h.version != kFrameVersion) {
        *why = "not a health frame (bad magic or version)";
        return Decoded::Bad;
    }
    if (h.type < uint8_t(FrameType::Heartbeat) || h.type > uint8_t(FrameType::Goodbye)) {
        *why = "unknown health frame type " + std::to_string(h.type);
        return Decoded::Bad;
    }
    if (h.textBytes > kMaxHealthText || !knownCode(h.code) || h.culprit < -1 ||
        (h.culprit >= 0 && uint32_t(h.culprit) >= ranks) || h.origin >= ranks || h.span > ranks) {
        *why = "malformed health frame (text length, code or rank out of range)";
        return Decoded::Bad;
    }
    if (len < sizeof h + h.textBytes) return Decoded::NeedMore;
    out->type = static_cast<FrameType>(h.type);
    out->code = static_cast<HcclResult>(h.code);
    out->culprit = h.culprit;
    out->seq = h.seq;
    out->origin = h.origin;
    out->span = h.span;
    out->text.assign(data + sizeof h, h.textBytes);
    *used = sizeof h + h.textBytes;
    return Decoded::Ok;
}

}  // namespace hostccl::health
