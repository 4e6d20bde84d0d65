// Wire accounting shared by the compressors, and the factory that parses a spec.
#include <cstdlib>
#include <string>

#include "training/compression/compressors.h"

namespace hostccl {
inline namespace v1 {

void GradientCompressor::countAllReduce(uint64_t bytes, uint64_t floats, uint32_t n) {
    if (n < 2) return;
    wireBytes_ += 2 * (n - 1) * bytes / n;
    fp32WireBytes_ += 2 * (n - 1) * floats * sizeof(float) / n;
}

void GradientCompressor::countAllGather(uint64_t bytesPerRank, uint64_t floats, uint32_t n) {
    if (n < 2) return;
    wireBytes_ += (n - 1) * bytesPerRank;
    fp32WireBytes_ += 2 * (n - 1) * floats * sizeof(float) / n;
}

std::unique_ptr<GradientCompressor> makeCompressor(const std::string& spec) {
    if (spec == "none" || spec.empty()) return std::make_unique<compression::Fp32AllReduce>();
    if (spec == "fp16") return std::make_unique<compression::CastAllReduce>(HCCL_DATA_TYPE_FP16);
    if (spec == "bf16") return std::make_unique<compression::CastAllReduce>(HCCL_DATA_TYPE_BFP16);
    if (spec == "sign") return std::make_unique<compression::SignCompressor>();
    if (spec == "topk" || spec.rfind("topk:", 0) == 0) {
        double ratio = 0.01;
        if (spec != "topk") {
            char* end = nullptr;
            ratio = std::strtod(spec.c_str() + 5, &end);
            if (end == spec.c_str() + 5 || *end != '\0' || !(ratio > 0.0 && ratio <= 1.0))
                throw Error(HCCL_E_PARA, "compression '" + spec + "': the topk ratio must be in (0, 1]");
        }
        return std::make_unique<compression::TopKCompressor>(ratio);
    }
    throw Error(HCCL_E_PARA, "compression '" + spec + "': expected none, fp16, bf16, topk[:ratio] or sign");
}

}  // namespace v1
}  // namespace hostccl
