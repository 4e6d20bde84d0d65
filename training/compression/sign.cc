// 1-bit sign compression with a scale and error feedback (as in signSGD with error
// feedback / 1-bit Adam): each rank sends the signs of (gradient + residual) and
// their mean magnitude; the average is mean over ranks of scale_r * sign_r. What the
// one bit could not say becomes the residual. The encoding: codec.cc.
#include <memory>

#include "training/compression/codec.h"
#include "training/compression/compressors.h"

namespace hostccl {
inline namespace v1 {
namespace compression {

std::unique_ptr<PendingReduction> SignCompressor::start(Communicator& comm, std::span<float> buffer, size_t key) {
    const uint32_t n = comm.size();
    const size_t count = buffer.size();
    KeyState& st = state(key, count);
    const size_t bytes = codec::signMessageBytes(count);
    uint8_t* mine = ErrorFeedback::bytes(st.sent, bytes);
    uint8_t* gathered = ErrorFeedback::bytes(st.gathered, bytes * n);
    codec::signEncode(buffer, st.residual, mine);
    countAllGather(bytes, count, n);
    Work w = comm.allGather(mine, gathered, bytes, HCCL_DATA_TYPE_UINT8);
    return std::make_unique<WorkThen>(std::move(w), [buffer, gathered, bytes, n] {
        codec::signDecode(gathered, bytes, n, buffer);
    });
}

}  // namespace compression
}  // namespace v1
}  // namespace hostccl
