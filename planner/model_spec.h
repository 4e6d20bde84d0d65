// What the planner knows of a model: its layers in forward order, each with its
// parameter count, forward FLOPs and output activation bytes per sample, and how
// tensor parallelism splits it (Megatron's column- and row-parallel matrices, or
// replicated). Read from JSON; every field is checked and an error names it.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "planner/host_sharing.h"

namespace hostccl::plan {

// How a layer is split across a tensor-parallel group.
//  Column: the weight's output columns are cut; its output stays split (no
//          collective forward), backward allreduces the gradient of its input.
//  Row:    the weight's input rows are cut; forward allreduces its output.
//  Replicated: every TP rank holds and computes all of it.
enum class TpSplit { Replicated, Column, Row };

struct LayerSpec {
    std::string name;
    uint64_t params = 0;           // elements
    double forwardFlops = 0;       // per sample, the whole layer (before any split)
    uint64_t activationBytes = 0;  // its output per sample, the whole layer
    // Bytes its element-wise work (activation functions, residual adds, copies)
    // reads and writes per sample, forward and backward together; a column layer's
    // share is cut by tp with its output.
    uint64_t elementwiseBytes = 0;
    // Measured seconds per sample on one idle core, the whole layer (0: not measured;
    // then its GEMMs and element-wise work are timed by the planner). A framework's
    // own costs (autograd, dispatch) are in them.
    double forwardSeconds = 0, backwardSeconds = 0;
    TpSplit tp = TpSplit::Replicated;
    // Whether a pipeline stage may begin at this layer (false inside a residual
    // block, whose skip connection would have to cross the stage boundary too).
    bool cutBefore = true;
    bool split() const { return tp != TpSplit::Replicated; }
};

// `measured[spec]` for the compressor `spec` names, however written ("topk:0.010" is
// "topk:0.01"), or -1: not measured.
double compressionOverheadFor(const std::map<std::string, double>& measured, const std::string& spec);

struct ModelSpec {
    std::string name;
    uint32_t dtypeBytes = 4;               // parameters, gradients and activations
    double optimizerStatePerParam = 0;     // extra copies the optimizer keeps (SGD 0, momentum 1, Adam 2)
    // Measured seconds of a step on one idle core beyond its layers' forward and
    // backward: the loss, the optimizer, a framework's own per-step work (0: not
    // measured; the planner then times the optimizer as an element-wise pass).
    double stepOverheadSeconds = 0;
    // That overhead was timed under a framework's data parallelism over one rank
    // (hostccl.planner's describe_module(data_parallel=...)): its own bucket work, the
    // gradients copied into buckets and the average copied back, is in it, so the
    // planner's bucket model does not charge those copies again (a 16.8 M-parameter
    // model's DDP added 8.4 ms a step on one core, about four passes over its gradients).
    bool dataParallelInStepOverhead = false;
    // Measured fixed seconds of one forward and backward, whatever its batch (a
    // framework's per-call work), paid again by every micro-batch; shared out over
    // the layers with measured times in proportion to them.
    double microBatchOverheadSeconds = 0;
    // The same fixed cost measured by the micro-batch's samples (may be empty: the one
    // figure above for every size). A pass's time is not a line in its samples: the
    // example CNN's one-sample pass took 0.37 ms on one core, two samples 0.57, four
    // 0.67, sixteen 1.64, so a line through one and sixteen puts two 20 % low.
    std::map<uint64_t, double> microBatchOverheadBySamples;
    // Measured seconds a step takes more on one idle core when its gradients go
    // through a compressor's DDP comm hook than through DDP's plain allreduce, by
    // compression spec ("fp16", "topk:0.01"; hostccl.planner.describe_module's
    // comm_hooks): a framework's compressor in place of the planner's codec rates.
    std::map<std::string, double> compressionOverheadSeconds;
    // Measured with the model's own processes sharing one host (hostccl.planner's
    // describe_module(host_sharing=N)): the crowded-host probe's figures with the
    // model's training step as the compute, for `ranksPerHost` ranks on `cores` cores
    // (ranksPerHost 0: not measured). A framework's ranks share a core far more
    // dearly than the probe's sgemm thread ranks (docs/planner.md); no hand-off figure.
    struct MeasuredSharing {
        uint32_t ranksPerHost = 0;
        double cores = 0;
        HostSharing figures;
        // Wall seconds a DDP step takes more there when its gradients go through a
        // compressor's comm hook than through the plain allreduce, every rank training
        // (by spec; may be empty): the hook's own work at the ranks' share of the cores,
        // decoding the others' payloads and the extra waits for its callbacks included.
        std::map<std::string, double> compressionOverheadSeconds;
        // The compute slowdown of a step of the example's `samples` passed one at a
        // time (one-sample micro-batches; 0: not measured): passes over fewer samples
        // share a core more cheaply than the whole batch's (figures.computeSlowdown).
        double oneSampleSlowdown = 0;
        uint32_t samples = 0;
        double compressionOverhead(const std::string& spec) const {
            return compressionOverheadFor(compressionOverheadSeconds, spec);
        }
    } hostSharing;
    std::vector<LayerSpec> layers;         // forward order

    uint64_t parameterCount() const;
    // The most pipeline stages the layers can be cut into.
    uint32_t maxStages() const;
    double forwardFlopsPerSample() const;
    // The fixed seconds a micro-batch of `samples` pays: microBatchOverheadBySamples
    // interpolated between the sizes measured (the nearest beyond them), or
    // microBatchOverheadSeconds when it is empty.
    double microBatchOverhead(uint64_t samples) const;
    // compressionOverheadSeconds for `spec` (compressionOverheadFor), or -1: not measured.
    double compressionOverhead(const std::string& spec) const;
};

// False and `why` ("layers[2].forward_flops: missing") on bad input; `out` unchanged.
bool parseModel(const std::string& json, ModelSpec* out, std::string* why);
bool loadModel(const std::string& path, ModelSpec* out, std::string* why);
std::string modelJson(const ModelSpec& m);
const char* tpSplitName(TpSplit s);

}  // namespace hostccl::plan
