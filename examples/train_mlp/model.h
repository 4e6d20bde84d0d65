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

// The part of the model a pipeline stage holds: the embedding when it is the first
// stage, blocks [firstBlock, endBlock), the head when it is the last.
struct StagePart {
    bool embed = true, head = true;
    uint32_t firstBlock = 0, endBlock = 0;
    uint32_t blocks() const { return endBlock - firstBlock; }
};
StagePart wholeModel(const ModelShape& shape);
// Stage `stage` of a cut given as hostccl-plan numbers layers (describeModel's:
// embed 0, block k's matrices 1 + 2k and 2 + 2k, head 1 + 2 blocks): each start 0
// or a block's first matrix or the head. False and `why` for any other cut.
bool stagePart(const ModelShape& shape, const std::vector<uint32_t>& starts, uint32_t stage, StagePart* out,
               std::string* why);
// `stages` stages with the blocks shared out evenly (embed with the first, head with the last).
std::vector<uint32_t> evenStageStarts(const ModelShape& shape, uint32_t stages);

class Model {
public:
    // `tp`: the tensor-parallel group (size 1 for none); `part`: what this rank's
    // pipeline stage holds. Initial values depend only on the seed, the TP rank and
    // each matrix's place in the whole model, so every data-parallel replica starts
    // equal and every split trains the same function.
    Model(const ModelShape& shape, hostccl::Communicator& tp, uint64_t seed, StagePart part);
    Model(const ModelShape& shape, hostccl::Communicator& tp, uint64_t seed) : Model(shape, tp, seed, wholeModel(shape)) {}

    // Forward and backward on a batch (x: batch x features, labels), leaving the
    // gradients (of the mean loss over the step's micro-batches) in each parameter's
    // grad. On the last micro-batch gradReady(id) is called as soon as parameter
    // id's gradient is final, in the order of backwardOrder(). Returns the batch's
    // mean loss. The whole model only.
    double step(std::span<const float> x, std::span<const uint32_t> labels, uint32_t batch,
                const std::function<void(size_t)>& gradReady, MicroBatch micro = {});

    // A pipeline stage's passes, micro-batch by micro-batch: `slot` keeps what a
    // micro-batch's forward leaves for its backward. forward takes x (the first
    // stage) or the previous stage's output (batch x width), and returns the mean
    // loss on the last stage (0 elsewhere); output(slot) is what goes to the next
    // stage. backward takes the next stage's gradient of that output (nothing on
    // the last stage; `micro` counts backward passes in the order they run) and
    // leaves inputGrad(slot) for the previous stage.
    double forward(uint32_t slot, std::span<const float> in, std::span<const uint32_t> labels, uint32_t batch,
                   MicroBatch micro);
    void backward(uint32_t slot, std::span<const float> outputGrad, const std::function<void(size_t)>& gradReady,
                  MicroBatch micro);
    std::span<const float> output(uint32_t slot) const;
    std::span<const float> inputGrad(uint32_t slot) const;

    // Parameter ids in the order backward finishes their gradients.
    const std::vector<size_t>& backwardOrder() const { return backwardOrder_; }
    std::vector<Parameter>& parameters() { return params_; }
    const StagePart& part() const { return part_; }
    void sgd(float lr);
    // Milliseconds spent waiting for tensor-parallel allreduces in the last step
    // (every micro-batch of it).
    double tpWaitMs() const { return tpWaitMs_; }

private:
    void allReduceTp(std::vector<float>& v);
    // Parameter ids: the embedding's weight (its bias follows), block k's first
    // matrix (its second follows), the head's weight (its bias follows).
    size_t embedId() const { return 0; }
    size_t blockId(uint32_t k) const { return (part_.embed ? 2 : 0) + 2 * (k - part_.firstBlock); }
    size_t headId() const { return blockId(part_.endBlock); }

    ModelShape shape_;
    StagePart part_;
    hostccl::Communicator& tp_;
    uint32_t hiddenShard_;
    std::vector<Parameter> params_;  // embedW, embedB, blocks (a, b)..., headW, headB: those the stage holds
    std::vector<size_t> backwardOrder_;
    double tpWaitMs_ = 0;
    // What forward keeps for backward and backward's temporaries, one per slot, kept
    // across steps: allocating them per step cost more than the GEMMs (fresh pages
    // faulted in and zeroed every time).
    struct Workspace {
        std::vector<float> embedInput, embedPre, logits, dh, dpre, dIn, dInput;
        std::vector<std::vector<float>> h, pre, act;
    };
    std::vector<Workspace> ws_;
};

}  // namespace train_mlp
