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

// One bucket's averaging in the three places it runs: on the training thread when
// the bucket is launched (gradients copied in, the compressor's encoding), on the
// communicator's stream (the collective), and on the training thread again when the
// step waits for it (the compressor's decoding, the average copied back). Plus the
// bytes a rank sends and the memory it holds beyond the gradients.
struct BucketCost {
    double launch = 0, collective = 0, finish = 0;
    uint64_t wire = 0, memory = 0;
    double seconds() const { return launch + collective + finish; }
};

BucketCost bucketCost(CommEstimator& comm, const GroupLayout& dp, uint64_t bytes, const SyncOptions& o) {
    const uint32_t n = dp.size();
    const double reduce = o.reduceSecondsPerByte;
    // Passes each reading and writing `times` x the bucket's bytes.
    auto passes = [&](double times) { return o.passSeconds ? o.passSeconds(times * double(bytes)) : 0.0; };
    const bool codecsMeasured = o.codecs.measured && o.onRank;
    // The compressor measured as a framework's hook runs it on one rank: the plain
    // path's passes (it was timed against them), half its work at launch and half at
    // finish, and (below) the other ranks' payloads decoded at the codec rates, but
    // where it was measured with the host's ranks all training (that is in it).
    const bool hooked = o.hookSecondsPerByte >= 0 && o.onRank && o.compression.kind != Compression::None;
    const uint64_t elems = bytes / 4;
    // The bucketer's own copies (a framework's, when measured in the step, are not charged).
    const double copy = o.bucketCopiesMeasured ? 0.0 : passes(2);
    BucketCost c;
    c.memory = bytes;  // the bucket's flat buffer
    c.launch = copy;   // gradients copied into the bucket
    c.finish = copy;   // and the average copied back
    c.collective = o.perCollective;
    if (hooked) {
        const double hook = o.hookSecondsPerByte * double(bytes);
        const double half = (o.hookMeasuredHere ? hook : o.onRank(hook)) / 2;
        c.launch += half + copy;  // and the 1/n scaling pass
        c.finish += half;
    }
    auto allReduce = [&](uint64_t b) {
        c.collective += comm.seconds(dp, CollType::AllReduce, b);
        c.wire += 2 * (n - 1) * b / n;
    };
    auto allGather = [&](uint64_t perRank) {
        c.collective += comm.seconds(dp, CollType::AllGather, perRank * n);
        c.wire += (n - 1) * perRank;
        c.memory += perRank * n;
    };
    switch (o.compression.kind) {
        case Compression::None:
            allReduce(bytes);
            c.launch += copy;  // the 1/n scaling pass, before the sum
            break;
        case Compression::Fp16:
        case Compression::Bf16:
            allReduce(bytes / 2);
            if (!hooked) {
                c.launch += passes(1.5);  // scaled and cast down
                c.finish += passes(1.5);  // cast back
            }
            c.memory += bytes / 2;
            break;
        case Compression::TopK: {
            const uint64_t k = std::max<uint64_t>(1, uint64_t(std::ceil(o.compression.ratio * double(elems))));
            allGather(8 * k);
            // residual add and selection; then every rank's entries added in
            const CodecRates& r = o.codecs;
            if (hooked) {
                if (codecsMeasured && !o.hookMeasuredHere) c.finish += o.onRank(r.topkDecodePair * double(n - 1) * double(k));
            } else if (codecsMeasured) {
                c.launch += o.onRank(r.topkEncode * double(elems));
                c.finish += o.onRank(r.topkDecodePass * double(elems) + r.topkDecodePair * double(n) * double(k));
            } else {
                c.launch += 3 * passes(2);
                c.finish += passes(2) + double(n) * 8 * k * reduce;
            }
            c.memory += bytes;  // the residual
            break;
        }
        case Compression::Sign:
            allGather(4 + (elems + 7) / 8);
            // residual add, signs and scale; then n ranks' signs expanded and added
            if (hooked) {
                if (codecsMeasured && !o.hookMeasuredHere)
                    c.finish += o.onRank(o.codecs.signDecodePerRank * double(n - 1) * double(elems));
            } else if (codecsMeasured) {
                c.launch += o.onRank(o.codecs.signEncode * double(elems));
                c.finish += o.onRank(o.codecs.signDecodePerRank * double(n) * double(elems));
            } else {
                c.launch += passes(2);
                c.finish += passes(2) + double(n) * bytes * reduce;
            }
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
    // The training thread launches each bucket when its last gradient is ready (with
    // overlap; else all at the end), its launch work delaying the rest of backward;
    // the stream runs the collectives in order; the step then waits for each bucket
    // in turn and finishes it on the training thread.
    std::vector<BucketCost> costs;
    for (const Bucket& b : buckets) costs.push_back(bucketCost(comm, dp, b.bytes, o));
    double thread = 0, stream = 0, delayed = 0;
    std::vector<double> streamEnd;
    for (size_t i = 0; i < buckets.size(); ++i) {
        const double ready = (o.overlap ? std::min(buckets[i].readyAt, o.backwardSeconds) : o.backwardSeconds) + delayed;
        thread = std::max(thread, ready) + costs[i].launch;
        delayed += costs[i].launch;
        stream = std::max(stream, thread) + costs[i].collective;
        streamEnd.push_back(stream);
    }
    double end = std::max(thread, o.backwardSeconds + delayed);
    for (size_t i = 0; i < buckets.size(); ++i) {
        end = std::max(end, streamEnd[i]) + costs[i].finish;
        res.commSeconds += costs[i].seconds();
        res.coreSeconds += costs[i].launch + costs[i].finish + (o.collectiveOnCores ? costs[i].collective - o.perCollective : 0);
        res.wireBytes += costs[i].wire;
        res.extraMemory += costs[i].memory;
    }
    res.exposedSeconds = std::max(0.0, end - o.backwardSeconds);  // launch work included
    return res;
}

}  // namespace hostccl::plan
