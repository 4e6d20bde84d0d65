// A generated classification set: `classes` Gaussian clusters in `features`
// dimensions. Sample i is a pure function of (seed, i), so every rank can draw any
// part of any batch without sharing data.
#pragma once

#include <cmath>
#include <cstdint>
#include <vector>

namespace train_mlp {

inline uint64_t mix(uint64_t z) {  // splitmix64
    z += 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

// A standard normal value that depends only on (stream, i): Box-Muller on two hashes.
inline float hashedNormal(uint64_t stream, uint64_t i) {
    double u1 = (double(mix(stream * 31 + 2 * i) >> 11) + 0.5) / 9007199254740992.0;
    double u2 = double(mix(stream * 31 + 2 * i + 1) >> 11) / 9007199254740992.0;
    return float(std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
}

class Dataset {
public:
    // `separation`: the scale of the cluster centres against unit noise (smaller: harder).
    Dataset(uint32_t features, uint32_t classes, float separation, uint64_t seed)
        : features_(features), classes_(classes), seed_(seed) {
        centers_.resize(size_t(classes) * features);
        for (size_t i = 0; i < centers_.size(); ++i) centers_[i] = separation * hashedNormal(seed ^ 0xC0FFEE, i);
    }
    uint32_t features() const { return features_; }
    uint32_t classes() const { return classes_; }

    // Writes sample `index`'s features to x and returns its label.
    uint32_t sample(uint64_t index, float* x) const {
        uint32_t label = uint32_t(mix(seed_ + index * 0x9E3779B97F4A7C15ull) % classes_);
        for (uint32_t f = 0; f < features_; ++f)
            x[f] = centers_[size_t(label) * features_ + f] + hashedNormal(seed_ + 1, index * features_ + f);
        return label;
    }

private:
    uint32_t features_, classes_;
    uint64_t seed_;
    std::vector<float> centers_;
};

}  // namespace train_mlp
