// What the lossy compressors' own work costs on one core, timed on the very code
// the bucketer runs (training/compression/codec.cc): encoding per gradient entry,
// and decoding per entry of the bucket plus per entry received from each rank.
#pragma once

namespace hostccl::plan {

struct CodecRates {
    bool measured = false;
    double signEncode = 0;         // seconds per entry
    double signDecodePerRank = 0;  // seconds per entry and rank
    double topkEncode = 0;         // seconds per entry (at a 1 % ratio)
    double topkDecodePass = 0;     // seconds per entry of the bucket (zeroing, scaling)
    double topkDecodePair = 0;     // seconds per received (index, value) pair
};

// About 0.2 s: a 1 Mi-entry gradient, messages of 1 and 4 ranks.
CodecRates measureCodecs();

}  // namespace hostccl::plan
