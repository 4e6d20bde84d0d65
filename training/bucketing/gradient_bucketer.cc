// Gradient bucketing: packs ready gradients into flat buckets and launches each
// bucket's averaging as soon as it is full, in bucket order.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <string>

#include "hostccl/bucketing.hpp"

namespace hostccl {
inline namespace v1 {

struct GradientBucketer::Bucket {
    std::vector<float> flat;
    std::vector<size_t> members;  // gradient ids, in add() order
    size_t pending = 0;           // members not yet ready this step
    std::unique_ptr<PendingReduction> inFlight;
};

GradientBucketer::GradientBucketer(Communicator& comm, BucketOptions options,
                                   std::unique_ptr<GradientCompressor> compressor)
    : comm_(comm), options_(options), compressor_(compressor ? std::move(compressor) : makeCompressor("none")) {
    if (options_.bucketBytes == 0 || options_.firstBucketBytes == 0)
        throw Error(HCCL_E_PARA, "BucketOptions: bucket sizes must be positive");
}

GradientBucketer::~GradientBucketer() {
    // Buffers of ops still in flight must outlive them.
    for (auto& b : buckets_)
        if (b->inFlight) {
            try {
                b->inFlight->finish();
            } catch (const Error&) {  // the failure was the caller's to collect; do not throw from a destructor
            }
        }
}

size_t GradientBucketer::add(std::span<float> gradient, uint32_t bucketGroup) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!buckets_.empty()) throw Error(HCCL_E_PARA, "GradientBucketer::add after the first step began");
    grads_.push_back(gradient);
    groupOf_.push_back(bucketGroup);
    return grads_.size() - 1;
}

// Fills buckets in add() order, each bucket group its own; a gradient is never
// split, so one larger than the limit has a bucket of its own. Buckets launch in
// the order they were opened.
void GradientBucketer::build() {
    std::map<uint32_t, size_t> open;  // bucket group -> its bucket still taking gradients
    bucketOf_.resize(grads_.size());
    offsetOf_.resize(grads_.size());
    for (size_t id = 0; id < grads_.size(); ++id) {
        const size_t bytes = grads_[id].size_bytes();
        auto it = open.find(groupOf_[id]);
        if (it != open.end()) {
            const size_t limit = it->second == 0 ? options_.firstBucketBytes : options_.bucketBytes;
            if (buckets_[it->second]->flat.size() * sizeof(float) + bytes > limit) it = open.end();
        }
        if (it == open.end()) {
            buckets_.push_back(std::make_unique<Bucket>());
            it = open.insert_or_assign(groupOf_[id], buckets_.size() - 1).first;
        }
        Bucket& b = *buckets_[it->second];
        bucketOf_[id] = it->second;
        offsetOf_[id] = b.flat.size();
        b.members.push_back(id);
        b.flat.resize(b.flat.size() + grads_[id].size());
    }
    for (auto& b : buckets_) b->pending = b->members.size();
    readyThisStep_.assign(grads_.size(), false);
}

void GradientBucketer::ready(size_t id) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (id >= grads_.size()) throw Error(HCCL_E_PARA, "GradientBucketer::ready: no gradient " + std::to_string(id));
    if (buckets_.empty()) build();
    if (readyThisStep_[id]) throw Error(HCCL_E_PARA, "GradientBucketer::ready: gradient " + std::to_string(id) +
                                                         " marked ready twice in one step");
    readyThisStep_[id] = true;
    Bucket& b = *buckets_[bucketOf_[id]];
    std::memcpy(b.flat.data() + offsetOf_[id], grads_[id].data(), grads_[id].size_bytes());
    --b.pending;
    if (options_.overlap) launchReady();
}

void GradientBucketer::launchReady() {
    while (nextLaunch_ < buckets_.size() && buckets_[nextLaunch_]->pending == 0) {
        Bucket& b = *buckets_[nextLaunch_];
        b.inFlight = compressor_->start(comm_, std::span<float>(b.flat), nextLaunch_);
        ++nextLaunch_;
    }
}

void GradientBucketer::waitAll() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (buckets_.empty()) build();
    try {
        for (size_t id = 0; id < grads_.size(); ++id) {
            if (readyThisStep_[id]) continue;  // unused this step: reduced as it stands
            Bucket& b = *buckets_[bucketOf_[id]];
            std::memcpy(b.flat.data() + offsetOf_[id], grads_[id].data(), grads_[id].size_bytes());
            --b.pending;
        }
        launchReady();
        last_ = finishStep();
    } catch (const Error&) {
        // A failed collective (or a refused launch): let every op in flight finish
        // with the buffers alive, and start the next step from a clean state.
        for (auto& b : buckets_) {
            if (b->inFlight) {
                try {
                    b->inFlight->finish();
                } catch (const Error&) {  // the first failure is the one rethrown
                }
                b->inFlight.reset();
            }
        }
        resetStep();
        throw;
    }
    resetStep();
}

GradientBucketer::StepStats GradientBucketer::finishStep() {
    StepStats stats;
    for (auto& b : buckets_) {
        auto t0 = std::chrono::steady_clock::now();
        std::unique_ptr<PendingReduction> op = std::move(b->inFlight);
        op->finish();  // throws a failed collective's Error
        stats.exposedMs += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        stats.commMs += op->runMs();
        for (size_t id : b->members)
            std::memcpy(grads_[id].data(), b->flat.data() + offsetOf_[id], grads_[id].size_bytes());
    }
    stats.wireBytes = compressor_->wireBytes() - wireMark_;
    return stats;
}

void GradientBucketer::resetStep() {
    for (auto& b : buckets_) b->pending = b->members.size();
    readyThisStep_.assign(grads_.size(), false);
    nextLaunch_ = 0;
    wireMark_ = compressor_->wireBytes();
}

}  // namespace v1
}  // namespace hostccl
