// The MLP: embed (features -> width, ReLU), `blocks` Megatron-style MLP blocks
// (width -> hidden -> width: the first matrix split by columns and the second by
// rows across the tensor-parallel group, one allreduce after each), and a head
// (width -> classes) with softmax cross-entropy. Embed and head are replicated.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "hostccl/hostccl.hpp"

namespace train_mlp {

struct ModelShape {
    uint32_t features, classes, width, hidden, blocks;
};

struct Parameter {
    const char* name;
    std::vector<float> value, grad;
    bool sharded;  // a tensor-parallel shard (differs between TP ranks)
};

// Which of a step's micro-batches a pass is: gradients are accumulated over them
// (the first overwrites), each weighted 1 / count, and are final after the last.
struct MicroBatch {
    uint32_t index = 0, count = 1;
    bool last() const { return index + 1 == count; }
};

// The model as hostccl-plan reads one (JSON: layers, parameters, FLOPs, activations).
std::string describeModel(const ModelShape& shape);

class Model {
public:
    // `tp`: the tensor-parallel group (size 1 for none). Initial values depend only
    // on the seed and the TP rank, so every data-parallel replica starts equal.
    Model(const ModelShape& shape, hostccl::Communicator& tp, uint64_t seed);

    // Forward and backward on a batch (x: batch x features, labels), leaving the
    // gradients (of the mean loss over the step's micro-batches) in each parameter's
    // grad. On the last micro-batch gradReady(id) is called as soon as parameter
    // id's gradient is final, in the order of backwardOrder(). Returns the batch's
    // mean loss.
    double step(std::span<const float> x, std::span<const uint32_t> labels, uint32_t batch,
                const std::function<void(size_t)>& gradReady, MicroBatch micro = {});
    // Parameter ids in the order backward finishes their gradients.
    const std::vector<size_t>& backwardOrder() const { return backwardOrder_; }
    std::vector<Parameter>& parameters() { return params_; }
    void sgd(float lr);
    // Milliseconds spent waiting for tensor-parallel allreduces in the last step
    // (every micro-batch of it).
    double tpWaitMs() const { return tpWaitMs_; }

private:
    void allReduceTp(std::vector<float>& v);

    ModelShape shape_;
    hostccl::Communicator& tp_;
    uint32_t hiddenShard_;
    std::vector<Parameter> params_;  // embedW, embedB, blocks (a, b)..., headW, headB
    std::vector<size_t> backwardOrder_;
    double tpWaitMs_ = 0;
    // What forward keeps for backward and backward's temporaries, kept across steps:
    // allocating them per step cost more than the GEMMs (fresh pages faulted in and
    // zeroed every time).
    struct Workspace {
        std::vector<float> embedPre, logits, dh, dpre, dIn;
        std::vector<std::vector<float>> h, pre, act;
    } ws_;
};

}  // namespace train_mlp
