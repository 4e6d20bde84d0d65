// The MLP as hostccl-plan reads a model (docs/planner.md): each matrix a layer
// with its parameters, forward FLOPs and output bytes per sample, and how tensor
// parallelism splits it (model.h: block matrices by columns, then by rows).
#include <string>

#include "model.h"

namespace train_mlp {

namespace {
// `passes`: how many times model.cc's element-wise loops read or write each output
// element, forward and backward together (bias adds, ReLU and its copy, residual
// adds, the softmax, bias gradients).
// `cut`: whether a pipeline stage may begin here (not between a block's matrices:
// the residual would have to cross too).
std::string layer(const std::string& name, uint64_t in, uint64_t out, bool bias, const char* tp, uint64_t passes,
                  bool cut = true) {
    const uint64_t params = in * out + (bias ? out : 0);
    return "    {\"name\": \"" + name + "\", \"params\": " + std::to_string(params) + ", \"forward_flops\": " +
           std::to_string(2 * in * out) + ", \"activation_bytes\": " + std::to_string(4 * out) +
           ", \"elementwise_bytes\": " + std::to_string(4 * out * passes) + ", \"tp\": \"" + tp + "\"" +
           (cut ? "" : ", \"cut_before\": false") + "}";
}
}  // namespace

std::string describeModel(const ModelShape& s) {
    // embed: bias add 2, copy 2, ReLU 2; backward ReLU 3, bias gradient 1.
    std::string layers = layer("embed", s.features, s.width, true, "replicated", 10);
    for (uint32_t k = 0; k < s.blocks; ++k) {
        // a: copy 2, ReLU 2; backward ReLU 3. b: residual add 3; backward gradient add 3.
        layers += ",\n" + layer("block" + std::to_string(k) + ".a", s.width, s.hidden, false, "column", 7);
        layers += ",\n" + layer("block" + std::to_string(k) + ".b", s.hidden, s.width, false, "row", 6, false);
    }
    // head: bias add 2, softmax about 6; backward bias gradient 1.
    layers += ",\n" + layer("head", s.width, s.classes, true, "replicated", 9);
    return "{\n  \"name\": \"train_mlp\",\n  \"dtype_bytes\": 4,\n  \"optimizer_state_per_param\": 0,\n  \"layers\": [\n" +
           layers + "\n  ]\n}\n";
}

}  // namespace train_mlp
