// Top-K sparsification with error feedback: each rank sends its k largest-magnitude
// entries of (gradient + residual) as (index, value) pairs; the average is the sum
// of every rank's pairs scattered into zeros, over n. The unsent rest becomes the
// residual. The selection and scatter: codec.cc.
#include <fmt/format.h>

#include <memory>
#include <vector>

#include "training/compression/codec.h"
#include "training/compression/compressors.h"

namespace hostccl {
inline namespace v1 {
namespace compression {

std::string TopKCompressor::name() const { return fmt::format("topk:{}", ratio_); }

std::unique_ptr<PendingReduction> TopKCompressor::start(Communicator& comm, std::span<float> buffer, size_t key) {
    const uint32_t n = comm.size();
    const size_t count = buffer.size();
    const size_t k = codec::topkCount(count, ratio_);
    KeyState& st = state(key, count);
    // Pairs as 2k uint32 words: index, then the value's bits.
    st.sent.resize(2 * k);
    st.gathered.resize(2 * k * n);
    const uint32_t* gathered = st.gathered.data();
    codec::topkEncode(buffer, st.residual, k, st.sent.data());
    countAllGather(2 * k * sizeof(uint32_t), count, n);
    Work w = comm.allGather(st.sent.data(), st.gathered.data(), 2 * k, HCCL_DATA_TYPE_UINT32);
    return std::make_unique<WorkThen>(std::move(w), [buffer, gathered, k, n] {
        codec::topkDecode(gathered, k, n, buffer);
    });
}

}  // namespace compression
}  // namespace v1
}  // namespace hostccl
