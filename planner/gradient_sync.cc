#include "planner/gradient_sync.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>

namespace hostccl::plan {

bool parseCompression(const std::string& spec, Compression* out, std::string* why) {
    Compression c;
    if (spec == "none") c.kind = Compression::None;
    else if (spec == "fp16") c.kind = Compression::Fp16;
    else if (spec == "bf16") c.kind = Compression::Bf16;
    else if (spec == "sign") c.kind = Compression::Sign;
    else if (spec == "topk" || spec.rfind("topk:", 0) == 0) {
        c.kind = Compression::TopK;
        if (spec != "topk") {
            char* end = nullptr;
            c.ratio = std::strtod(spec.c_str() + 5, &end);
            if (end == spec.c_str() + 5 || *end != '\0' || !(c.ratio > 0.0 && c.ratio <= 1.0))
                return *why = fmt::format("compression '{}': the top-k ratio must be in (0, 1]", spec), false;
        }
    } else {
        return *why = fmt::format("compression '{}': expected none, fp16, bf16, topk[:ratio] or sign", spec), false;
    }
    *out = c;
    return true;
}

namespace {

struct Bucket {
    uint64_t bytes = 0;
    double readyAt = 0;
};

// Buckets as GradientBucketer::build makes them: in order, per group, a gradient
// never split, the very first bucket capped at firstBucketBytes.
std::vector<Bucket> packBuckets(const std::vector<Gradient>& grads, uint64_t first, uint64_t rest) {
    std::vector<Bucket> buckets;
    std::map<uint32_t, size_t> open;
    for (const Gradient& g : grads) {
        auto it = open.find(g.group);
        if (it != open.end()) {
            const uint64_t limit = it->second == 0 ? first : rest;
            if (buckets[it->second].bytes + g.bytes > limit) it = open.end();
        }
        if (it == open.end()) {
            buckets.push_back({});
            it = open.insert_or_assign(g.group, buckets.size() - 1).first;
        }
        Bucket& b = buckets[it->second];
        b.bytes += g.bytes;
        b.readyAt = std::max(b.readyAt, g.readyAt);
    }
    return buckets;
}

// One bucket's averaging: the collective, the compressor's passes, the bytes a
// rank sends, and the memory it holds beyond the gradients.
struct BucketCost {
    double seconds = 0;
    uint64_t wire = 0, memory = 0;
};

BucketCost bucketCost(CommEstimator& comm, const GroupLayout& dp, uint64_t bytes, const SyncOptions& o) {
    const uint32_t n = dp.size();
    const double reduce = o.reduceSecondsPerByte;
    // Passes each reading and writing `times` x the bucket's bytes.
    auto passes = [&](double times) { return o.passSeconds ? o.passSeconds(times * double(bytes)) : 0.0; };
    const uint64_t elems = bytes / 4;
    BucketCost c;
    c.memory = bytes;  // the bucket's flat buffer
    c.seconds = 2 * passes(2) + o.perCollective;  // gradients copied into the bucket and the average back
    auto allReduce = [&](uint64_t b) {
        c.seconds += comm.seconds(dp, CollType::AllReduce, b);
        c.wire += 2 * (n - 1) * b / n;
    };
    auto allGather = [&](uint64_t perRank) {
        c.seconds += comm.seconds(dp, CollType::AllGather, perRank * n);
        c.wire += (n - 1) * perRank;
        c.memory += perRank * n;
    };
    switch (o.compression.kind) {
        case Compression::None:
            allReduce(bytes);
            c.seconds += passes(2);  // the 1/n scaling pass
            break;
        case Compression::Fp16:
        case Compression::Bf16:
            allReduce(bytes / 2);
            c.seconds += 2 * passes(1.5);  // cast down, cast back
            c.memory += bytes / 2;
            break;
        case Compression::TopK: {
            const uint64_t k = std::max<uint64_t>(1, uint64_t(std::ceil(o.compression.ratio * double(elems))));
            allGather(8 * k);
            // residual add and selection, then every rank's entries added in
            if (o.codecs.measured && o.onRank) {
                const CodecRates& r = o.codecs;
                c.seconds += o.onRank(r.topkEncode * double(elems) + r.topkDecodePass * double(elems) +
                                      r.topkDecodePair * double(n) * double(k));
            } else {
                c.seconds += 4 * passes(2) + double(n) * 8 * k * reduce;
            }
            c.memory += bytes;  // the residual
            break;
        }
        case Compression::Sign:
            allGather(4 + (elems + 7) / 8);
            // residual add, signs and scale; then n ranks' signs expanded and added
            if (o.codecs.measured && o.onRank)
                c.seconds += o.onRank(o.codecs.signEncode * double(elems) + o.codecs.signDecodePerRank * double(n) * double(elems));
            else
                c.seconds += 2 * passes(2) + double(n) * bytes * reduce;
            c.memory += bytes;
            break;
    }
    return c;
}

}  // namespace

SyncResult simulateGradientSync(CommEstimator& comm, const GroupLayout& dp, const std::vector<Gradient>& gradients,
                                const SyncOptions& o) {
    SyncResult res;
    if (dp.size() <= 1) return res;
    const std::vector<Bucket> buckets = packBuckets(gradients, o.firstBucketBytes, o.bucketBytes);
    res.buckets = static_cast<uint32_t>(buckets.size());
    double end = 0;
    for (const Bucket& b : buckets) {
        const BucketCost c = bucketCost(comm, dp, b.bytes, o);
        const double ready = o.overlap ? std::min(b.readyAt, o.backwardSeconds) : o.backwardSeconds;
        end = std::max(end, ready) + c.seconds;
        res.commSeconds += c.seconds;
        res.wireBytes += c.wire;
        res.extraMemory += c.memory;
    }
    res.exposedSeconds = std::max(0.0, end - o.backwardSeconds);
    return res;
}

}  // namespace hostccl::plan
