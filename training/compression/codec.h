// The compressors' own work on the data, apart from the collective between them:
// encoding a gradient (with its error-feedback residual) into a message and
// decoding every rank's gathered messages into the average. No communicator, so
// hostccl-plan times the very same code to predict what a compressor costs.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace hostccl::codec {

// 1-bit sign: a message is the scale (mean |res|, 4 bytes) then one bit per entry.
size_t signMessageBytes(size_t count);
// res += grad; writes the message; takes from res what its bits said.
void signEncode(std::span<const float> grad, std::span<float> res, uint8_t* message);
// out = the mean over `n` messages of scale x sign.
void signDecode(const uint8_t* gathered, size_t messageBytes, uint32_t n, std::span<float> out);

// Top-k: k = ceil(ratio x count), at least 1 (none for an empty gradient).
size_t topkCount(size_t count, double ratio);
// res += grad; writes the k largest-magnitude entries of res as (index, value bits)
// pairs (2k words) and zeroes them in res.
void topkEncode(std::span<const float> grad, std::span<float> res, size_t k, uint32_t* pairs);
// out = the sum of every rank's pairs (n x 2k words) scattered into zeros, over n.
void topkDecode(const uint32_t* gathered, size_t k, uint32_t n, std::span<float> out);

}  // namespace hostccl::codec
