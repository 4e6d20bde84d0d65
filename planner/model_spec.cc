#include "planner/model_spec.h"

#include "planner/gradient_sync.h"

#include <fmt/format.h>

#include <cmath>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <sstream>

namespace hostccl::plan {

using nlohmann::json;

namespace {

// Field readers: each fails with the field's path and what was wrong.
struct Reader {
    std::string* why;
    bool fail(const std::string& text) {
        *why = text;
        return false;
    }
    const json* field(const json& obj, const std::string& path, const char* key, bool required) {
        auto it = obj.find(key);
        if (it == obj.end()) {
            if (required) fail(fmt::format("{}: missing", path));
            return nullptr;
        }
        return &*it;
    }
    // A finite number >= min (integers: whole and below 2^53).
    bool number(const json& obj, const std::string& at, const char* key, bool required, double min, bool whole, double* out) {
        const std::string path = at.empty() ? key : at + "." + key;
        const json* v = field(obj, path, key, required);
        if (v == nullptr) return !required;
        if (!v->is_number()) return fail(fmt::format("{}: must be a number", path));
        const double x = v->get<double>();
        if (!std::isfinite(x) || x < min) return fail(fmt::format("{}: must be at least {} (got {})", path, min, x));
        if (whole && (x != std::floor(x) || x > 9007199254740992.0))
            return fail(fmt::format("{}: must be a whole number (got {})", path, x));
        *out = x;
        return true;
    }
};

bool parseSplit(const std::string& s, TpSplit* out) {
    for (TpSplit t : {TpSplit::Replicated, TpSplit::Column, TpSplit::Row})
        if (s == tpSplitName(t)) {
            *out = t;
            return true;
        }
    return false;
}

bool parseLayer(Reader& r, const json& l, size_t i, LayerSpec* out) {
    const std::string at = fmt::format("layers[{}]", i);
    if (!l.is_object()) return r.fail(at + ": must be an object");
    LayerSpec layer;
    auto name = l.find("name");
    if (name != l.end() && !name->is_string()) return r.fail(at + ".name: must be a string");
    layer.name = name != l.end() ? name->get<std::string>() : fmt::format("layer{}", i);
    double params = 0, flops = 0, act = 0;
    if (!r.number(l, at, "params", true, 0, true, &params) || !r.number(l, at, "forward_flops", true, 0, false, &flops) ||
        !r.number(l, at, "activation_bytes", true, 0, true, &act))
        return false;
    layer.params = static_cast<uint64_t>(params);
    layer.forwardFlops = flops;
    layer.activationBytes = static_cast<uint64_t>(act);
    double elementwise = 0;
    if (!r.number(l, at, "elementwise_bytes", false, 0, true, &elementwise)) return false;
    layer.elementwiseBytes = static_cast<uint64_t>(elementwise);
    if (!r.number(l, at, "forward_seconds", false, 0, false, &layer.forwardSeconds) ||
        !r.number(l, at, "backward_seconds", false, 0, false, &layer.backwardSeconds))
        return false;
    if (auto cut = l.find("cut_before"); cut != l.end()) {
        if (!cut->is_boolean()) return r.fail(at + ".cut_before: must be true or false");
        layer.cutBefore = cut->get<bool>();
    }
    if (auto tp = l.find("tp"); tp != l.end())
        if (!tp->is_string() || !parseSplit(tp->get<std::string>(), &layer.tp))
            return r.fail(at + ".tp: must be \"replicated\", \"column\" or \"row\"");
    *out = layer;
    return true;
}

}  // namespace

const char* tpSplitName(TpSplit s) {
    switch (s) {
        case TpSplit::Column: return "column";
        case TpSplit::Row: return "row";
        default: return "replicated";
    }
}

uint64_t ModelSpec::parameterCount() const {
    uint64_t n = 0;
    for (const LayerSpec& l : layers) n += l.params;
    return n;
}

uint32_t ModelSpec::maxStages() const {
    uint32_t n = layers.empty() ? 0 : 1;
    for (size_t i = 1; i < layers.size(); ++i) n += layers[i].cutBefore ? 1 : 0;
    return n;
}

double ModelSpec::forwardFlopsPerSample() const {
    double f = 0;
    for (const LayerSpec& l : layers) f += l.forwardFlops;
    return f;
}

double ModelSpec::microBatchOverhead(uint64_t samples) const {
    if (microBatchOverheadBySamples.empty()) return microBatchOverheadSeconds;
    auto above = microBatchOverheadBySamples.lower_bound(samples);
    if (above == microBatchOverheadBySamples.end()) return std::prev(above)->second;
    if (above->first == samples || above == microBatchOverheadBySamples.begin()) return above->second;
    const auto below = std::prev(above);
    const double along = double(samples - below->first) / double(above->first - below->first);
    return below->second + (above->second - below->second) * along;
}

double compressionOverheadFor(const std::map<std::string, double>& measured, const std::string& spec) {
    Compression want, have;
    std::string unused;
    if (!parseCompression(spec, &want, &unused)) return -1;
    for (const auto& [key, seconds] : measured)
        if (parseCompression(key, &have, &unused) && have.kind == want.kind &&
            (want.kind != Compression::TopK || have.ratio == want.ratio))
            return seconds;
    return -1;
}

double ModelSpec::compressionOverhead(const std::string& spec) const {
    return compressionOverheadFor(compressionOverheadSeconds, spec);
}

namespace {

// "compression_overhead_seconds" of `obj` (the model, or its host_sharing at `at`):
// {spec: seconds >= 0}, each spec a compressor the planner knows (not "none": DDP's
// plain allreduce is what it is measured against).
bool parseCompressionOverheads(Reader& r, const json& obj, const std::string& at, std::map<std::string, double>* out) {
    const std::string path = at.empty() ? "compression_overhead_seconds" : at + ".compression_overhead_seconds";
    const json* o = r.field(obj, path, "compression_overhead_seconds", false);
    if (o == nullptr) return true;
    if (!o->is_object()) return r.fail(path + ": must be an object of compression -> seconds");
    for (const auto& [key, value] : o->items()) {
        const std::string where = path + "." + key;
        Compression c;
        std::string bad;
        if (!parseCompression(key, &c, &bad) || c.kind == Compression::None)
            return r.fail(fmt::format("{}: not a compressor (fp16, bf16, topk[:ratio], sign){}", where,
                                      bad.empty() ? "" : ": " + bad));
        if (!value.is_number() || value.get<double>() < 0)
            return r.fail(fmt::format("{}: must be a number >= 0", where));
        (*out)[key] = value.get<double>();
    }
    return true;
}

// "micro_batch_overhead_by_samples": {"1": seconds, "2": seconds, ...} (optional).
bool parseOverheadBySamples(Reader& r, const json& doc, std::map<uint64_t, double>* out) {
    const std::string path = "micro_batch_overhead_by_samples";
    const json* o = r.field(doc, path, path.c_str(), false);
    if (o == nullptr) return true;
    if (!o->is_object() || o->empty()) return r.fail(path + ": must be a non-empty object of samples -> seconds");
    std::map<uint64_t, double> table;
    for (const auto& [key, value] : o->items()) {
        const std::string where = path + "." + key;
        const bool digits = !key.empty() && key.size() <= 12 && key.find_first_not_of("0123456789") == std::string::npos;
        if (!digits || std::stoull(key) == 0) return r.fail(where + ": the key must be a whole number of samples, at least 1");
        if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < 0)
            return r.fail(where + ": must be a number >= 0");
        table[std::stoull(key)] = value.get<double>();
    }
    *out = table;
    return true;
}

// host_sharing's "compute_slowdown_one_sample" and "samples" (the example's batch it
// was measured with): optional, but together.
bool parseOneSampleSlowdown(Reader& r, const json& o, const std::string& at, ModelSpec::MeasuredSharing* s) {
    const bool slowdown = o.contains("compute_slowdown_one_sample"), samples = o.contains("samples");
    if (!slowdown && !samples) return true;
    double n = 0;
    if (!r.number(o, at, "compute_slowdown_one_sample", true, 1, false, &s->oneSampleSlowdown) ||
        !r.number(o, at, "samples", true, 1, true, &n))
        return false;
    if (n > 1e9) return r.fail(fmt::format("{}.samples: must be at most 1000000000 (got {})", at, n));
    s->samples = static_cast<uint32_t>(n);
    return true;
}

// "host_sharing": {ranks_per_host, cores, compute_slowdown, sync_base_seconds,
// sync_per_compute, sync_short_compute_seconds, sync_floor_seconds}, all required;
// compression_overhead_seconds and the one-sample slowdown optional.
bool parseHostSharing(Reader& r, const json& doc, ModelSpec* m) {
    const json* o = r.field(doc, "host_sharing", "host_sharing", false);
    if (o == nullptr) return true;
    if (!o->is_object()) return r.fail("host_sharing: must be an object");
    ModelSpec::MeasuredSharing s;
    HostSharing& f = s.figures;
    double ranks = 0;
    const std::string at = "host_sharing";
    if (!r.number(*o, at, "ranks_per_host", true, 2, true, &ranks) || !r.number(*o, at, "cores", true, 0.01, false, &s.cores) ||
        !r.number(*o, at, "compute_slowdown", true, 1, false, &f.computeSlowdown) ||
        !r.number(*o, at, "sync_base_seconds", true, 0, false, &f.syncBase) ||
        !r.number(*o, at, "sync_per_compute", true, 0, false, &f.syncPerCompute) ||
        !r.number(*o, at, "sync_short_compute_seconds", true, 0, false, &f.syncShortCompute) ||
        !r.number(*o, at, "sync_floor_seconds", true, 0, false, &f.syncFloor) ||
        !parseCompressionOverheads(r, *o, at, &s.compressionOverheadSeconds) ||
        !parseOneSampleSlowdown(r, *o, at, &s))
        return false;
    if (ranks > 1e6) return r.fail(fmt::format("host_sharing.ranks_per_host: must be at most 1000000 (got {})", ranks));
    s.ranksPerHost = static_cast<uint32_t>(ranks);
    m->hostSharing = s;
    return true;
}

}  // namespace

bool parseModel(const std::string& text, ModelSpec* out, std::string* why) {
    json doc = json::parse(text, nullptr, false);
    if (doc.is_discarded()) return *why = "not valid JSON", false;
    if (!doc.is_object()) return *why = "the model must be a JSON object", false;
    Reader r{why};
    ModelSpec m;
    if (auto name = doc.find("name"); name != doc.end()) {
        if (!name->is_string()) return r.fail("name: must be a string");
        m.name = name->get<std::string>();
    }
    double dtype = m.dtypeBytes, state = 0;
    if (!r.number(doc, "", "dtype_bytes", false, 1, true, &dtype) ||
        !r.number(doc, "", "optimizer_state_per_param", false, 0, false, &state) ||
        !r.number(doc, "", "step_overhead_seconds", false, 0, false, &m.stepOverheadSeconds) ||
        !r.number(doc, "", "micro_batch_overhead_seconds", false, 0, false, &m.microBatchOverheadSeconds))
        return false;
    if (auto ddp = doc.find("data_parallel_in_step_overhead"); ddp != doc.end()) {
        if (!ddp->is_boolean()) return r.fail("data_parallel_in_step_overhead: must be true or false");
        m.dataParallelInStepOverhead = ddp->get<bool>();
    }
    if (!parseOverheadBySamples(r, doc, &m.microBatchOverheadBySamples) ||
        !parseCompressionOverheads(r, doc, "", &m.compressionOverheadSeconds) || !parseHostSharing(r, doc, &m))
        return false;
    if (dtype > 16) return r.fail(fmt::format("dtype_bytes: must be 1-16 (got {})", dtype));
    m.dtypeBytes = static_cast<uint32_t>(dtype);
    m.optimizerStatePerParam = state;
    const json* layers = r.field(doc, "layers", "layers", true);
    if (layers == nullptr) return false;
    if (!layers->is_array() || layers->empty()) return r.fail("layers: must be a non-empty array");
    for (size_t i = 0; i < layers->size(); ++i) {
        LayerSpec l;
        if (!parseLayer(r, (*layers)[i], i, &l)) return false;
        m.layers.push_back(l);
    }
    if (m.forwardFlopsPerSample() <= 0) return r.fail("layers: every forward_flops is 0 (nothing to compute)");
    *out = m;
    return true;
}

bool loadModel(const std::string& path, ModelSpec* out, std::string* why) {
    std::ifstream f(path);
    if (!f) return *why = fmt::format("cannot read {}", path), false;
    std::stringstream text;
    text << f.rdbuf();
    if (parseModel(text.str(), out, why)) return true;
    *why = fmt::format("{}: {}", path, *why);
    return false;
}

std::string modelJson(const ModelSpec& m) {
    json layers = json::array();
    for (const LayerSpec& l : m.layers)
        layers.push_back({{"name", l.name},
                          {"params", l.params},
                          {"forward_flops", l.forwardFlops},
                          {"activation_bytes", l.activationBytes},
                          {"elementwise_bytes", l.elementwiseBytes},
                          {"forward_seconds", l.forwardSeconds},
                          {"backward_seconds", l.backwardSeconds},
                          {"tp", tpSplitName(l.tp)},
                          {"cut_before", l.cutBefore}});
    json doc = {{"name", m.name},
                {"dtype_bytes", m.dtypeBytes},
                {"optimizer_state_per_param", m.optimizerStatePerParam},
                {"step_overhead_seconds", m.stepOverheadSeconds},
                {"micro_batch_overhead_seconds", m.microBatchOverheadSeconds},
                {"layers", layers}};
    if (m.dataParallelInStepOverhead) doc["data_parallel_in_step_overhead"] = true;
    if (!m.compressionOverheadSeconds.empty()) doc["compression_overhead_seconds"] = m.compressionOverheadSeconds;
    for (const auto& [samples, seconds] : m.microBatchOverheadBySamples)
        doc["micro_batch_overhead_by_samples"][std::to_string(samples)] = seconds;
    if (m.hostSharing.ranksPerHost > 0) {
        const HostSharing& f = m.hostSharing.figures;
        doc["host_sharing"] = {{"ranks_per_host", m.hostSharing.ranksPerHost},
                               {"cores", m.hostSharing.cores},
                               {"compute_slowdown", f.computeSlowdown},
                               {"sync_base_seconds", f.syncBase},
                               {"sync_per_compute", f.syncPerCompute},
                               {"sync_short_compute_seconds", f.syncShortCompute},
                               {"sync_floor_seconds", f.syncFloor}};
        if (m.hostSharing.samples > 0) {
            doc["host_sharing"]["compute_slowdown_one_sample"] = m.hostSharing.oneSampleSlowdown;
            doc["host_sharing"]["samples"] = m.hostSharing.samples;
        }
        if (!m.hostSharing.compressionOverheadSeconds.empty())
            doc["host_sharing"]["compression_overhead_seconds"] = m.hostSharing.compressionOverheadSeconds;
    }
    return doc.dump(2) + "\n";
}

}  // namespace hostccl::plan
