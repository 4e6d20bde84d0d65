// The MLP as hostccl-plan reads a model (docs/planner.md): each matrix a layer
// with its parameters, forward FLOPs and output bytes per sample, and how tensor
// parallelism splits it (model.h: block matrices by columns, then by rows).
#include <string>

#include "model.h"

namespace train_mlp {

namespace {
std::string layer(const std::string& name, uint64_t in, uint64_t out, bool bias, const char* tp) {
    const uint64_t params = in * out + (bias ? out : 0);
    return "    {\"name\": \"" + name + "\", \"params\": " + std::to_string(params) + ", \"forward_flops\": " +
           std::to_string(2 * in * out) + ", \"activation_bytes\": " + std::to_string(4 * out) + ", \"tp\": \"" + tp + "\"}";
}
}  // namespace

std::string describeModel(const ModelShape& s) {
    std::string layers = layer("embed", s.features, s.width, true, "replicated");
    for (uint32_t k = 0; k < s.blocks; ++k) {
        layers += ",\n" + layer("block" + std::to_string(k) + ".a", s.width, s.hidden, false, "column");
        layers += ",\n" + layer("block" + std::to_string(k) + ".b", s.hidden, s.width, false, "row");
    }
    layers += ",\n" + layer("head", s.width, s.classes, true, "replicated");
    return "{\n  \"name\": \"train_mlp\",\n  \"dtype_bytes\": 4,\n  \"optimizer_state_per_param\": 0,\n  \"layers\": [\n" +
           layers + "\n  ]\n}\n";
}

}  // namespace train_mlp
