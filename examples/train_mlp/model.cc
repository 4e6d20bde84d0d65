// Forward, backward and SGD of the MLP (see model.h), with OpenBLAS GEMMs.
#include "model.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <cmath>

#include "dataset.h"

namespace train_mlp {
namespace {

// C (m x n) = op(A) * op(B) (+ C when accumulate), row-major.
void gemm(bool transA, bool transB, int m, int n, int k, const float* a, const float* b, float* c,
          bool accumulate = false) {
    cblas_sgemm(CblasRowMajor, transA ? CblasTrans : CblasNoTrans, transB ? CblasTrans : CblasNoTrans, m, n, k, 1.0f, a,
                transA ? m : k, b, transB ? k : n, accumulate ? 1.0f : 0.0f, c, n);
}

// Plain loops over rows and columns (no per-element modulo or branch), so the
// compiler vectorises them: they are a quarter of a step otherwise.
void relu(std::vector<float>& v) {
    for (float& x : v) x = std::max(x, 0.0f);
}
// dv *= (pre > 0)
void reluBackward(std::vector<float>& dv, const std::vector<float>& pre) {
    for (size_t i = 0; i < dv.size(); ++i) dv[i] = pre[i] > 0.0f ? dv[i] : 0.0f;
}
void addRowVector(std::vector<float>& m, const std::vector<float>& row) {
    const size_t cols = row.size();
    for (size_t r = 0; r < m.size(); r += cols)
        for (size_t j = 0; j < cols; ++j) m[r + j] += row[j];
}
void sumRows(const std::vector<float>& m, std::vector<float>& out, bool accumulate) {
    if (!accumulate) std::fill(out.begin(), out.end(), 0.0f);
    const size_t cols = out.size();
    for (size_t r = 0; r < m.size(); r += cols)
        for (size_t j = 0; j < cols; ++j) out[j] += m[r + j];
}

// Rows x cols of N(0, scale^2), taken from the full `fullRows x fullCols` matrix
// (columns or rows [first, first + count) of it), so that every TP degree trains
// the same function.
std::vector<float> initShard(uint64_t stream, uint32_t fullRows, uint32_t fullCols, bool splitColumns, uint32_t first,
                             uint32_t count, float scale) {
    uint32_t rows = splitColumns ? fullRows : count, cols = splitColumns ? count : fullCols;
    std::vector<float> w(size_t(rows) * cols);
    for (uint32_t i = 0; i < rows; ++i)
        for (uint32_t j = 0; j < cols; ++j) {
            uint64_t fi = splitColumns ? i : first + i, fj = splitColumns ? first + j : j;
            w[size_t(i) * cols + j] = scale * hashedNormal(stream, fi * fullCols + fj);
        }
    return w;
}

}  // namespace

StagePart wholeModel(const ModelShape& shape) { return StagePart{true, true, 0, shape.blocks}; }

bool stagePart(const ModelShape& shape, const std::vector<uint32_t>& starts, uint32_t stage, StagePart* out,
               std::string* why) {
    const uint32_t layers = 2 + 2 * shape.blocks, head = layers - 1;
    for (size_t i = 0; i < starts.size(); ++i) {
        const uint32_t s = starts[i];
        const bool fits = i == 0 ? s == 0 : (s > starts[i - 1] && s < layers && s % 2 == 1);
        if (!fits) {
            *why = "stage " + std::to_string(i) + " begins at layer " + std::to_string(s) +
                   "; stages begin at the embedding (0), a block's first matrix (1, 3, ...) or the head (" +
                   std::to_string(head) + "), in order";
            return false;
        }
    }
    if (stage >= starts.size()) return *why = "no stage " + std::to_string(stage), false;
    const uint32_t from = starts[stage], to = stage + 1 < starts.size() ? starts[stage + 1] : layers;
    StagePart p;
    p.embed = from == 0;
    p.head = to == layers;
    p.firstBlock = from == 0 ? 0 : (from - 1) / 2;
    p.endBlock = to >= head ? shape.blocks : (to - 1) / 2;
    *out = p;
    return true;
}

std::vector<uint32_t> evenStageStarts(const ModelShape& shape, uint32_t stages) {
    std::vector<uint32_t> starts{0};
    for (uint32_t s = 1; s < stages; ++s) starts.push_back(1 + 2 * (s * shape.blocks / stages));
    return starts;
}

Model::Model(const ModelShape& s, hostccl::Communicator& tp, uint64_t seed, StagePart part)
    : shape_(s), part_(part), tp_(tp) {
    const uint32_t t = tp.size(), me = tp.rank();
    if (s.hidden % t != 0) throw hostccl::Error(HCCL_E_PARA, "hidden width must be a multiple of the TP degree");
    hiddenShard_ = s.hidden / t;
    auto add = [&](const char* name, std::vector<float> v, bool sharded) {
        std::vector<float> g(v.size(), 0.0f);
        params_.push_back({name, std::move(v), std::move(g), sharded});
    };
    if (part.embed) {
        add("embed.w", initShard(seed + 1, s.features, s.width, true, 0, s.width, std::sqrt(2.0f / s.features)), false);
        add("embed.b", std::vector<float>(s.width, 0.0f), false);
    }
    for (uint32_t k = part.firstBlock; k < part.endBlock; ++k) {
        add("block.a", initShard(seed + 10 + 2 * k, s.width, s.hidden, true, me * hiddenShard_, hiddenShard_,
                                 std::sqrt(2.0f / s.width)), true);
        // Each block adds its output to the stream: beyond two blocks their sum would
        // grow with their count (8 blocks started at a loss of 6.4 and diverged), so
        // each is scaled by sqrt(2 / blocks).
        add("block.b", initShard(seed + 11 + 2 * k, s.hidden, s.width, false, me * hiddenShard_, hiddenShard_,
                                 0.5f / std::sqrt(float(s.hidden)) * std::sqrt(2.0f / float(std::max(2u, s.blocks)))),
            true);
    }
    if (part.head) {
        add("head.w", initShard(seed + 2, s.width, s.classes, true, 0, s.classes, std::sqrt(1.0f / s.width)), false);
        add("head.b", std::vector<float>(s.classes, 0.0f), false);
        backwardOrder_ = {headId(), headId() + 1};
    }
    for (uint32_t k = part.endBlock; k-- > part.firstBlock;) {
        backwardOrder_.push_back(blockId(k) + 1);  // block k's b, then its a
        backwardOrder_.push_back(blockId(k));
    }
    if (part.embed) {
        backwardOrder_.push_back(embedId());
        backwardOrder_.push_back(embedId() + 1);
    }
}

void Model::allReduceTp(std::vector<float>& v) {
    if (tp_.size() == 1) return;
    auto t0 = std::chrono::steady_clock::now();
    tp_.allReduce(std::span<float>(v)).wait();
    tpWaitMs_ += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

namespace {
// Sizes `v` to n elements; after the first step it never reallocates, and its
// contents are left for the caller to overwrite.
void fit(std::vector<float>& v, size_t n) {
    if (v.size() != n) v.resize(n);
}
}  // namespace

double Model::step(std::span<const float> x, std::span<const uint32_t> labels, uint32_t batch,
                   const std::function<void(size_t)>& gradReady, MicroBatch micro) {
    const double loss = forward(0, x, labels, batch, micro);
    backward(0, {}, gradReady, micro);
    return loss;
}

double Model::forward(uint32_t slot, std::span<const float> in, std::span<const uint32_t> labels, uint32_t batch,
                      MicroBatch micro) {
    const ModelShape& s = shape_;
    const int B = int(batch), F = int(s.features), D = int(s.width), Hs = int(hiddenShard_), C = int(s.classes);
    const uint32_t nb = part_.blocks();
    if (micro.index == 0 && slot == 0) tpWaitMs_ = 0;  // the whole step's waits
    if (ws_.size() <= slot) ws_.resize(slot + 1);
    Workspace& w = ws_[slot];
    auto P = [&](size_t i) -> Parameter& { return params_[i]; };
    w.h.resize(nb + 1), w.pre.resize(nb), w.act.resize(nb);

    // Forward, keeping what backward needs: h[0] is the first block's input.
    if (part_.embed) {
        w.embedInput.assign(in.begin(), in.end());  // its weight's gradient needs it
        fit(w.embedPre, size_t(B) * D);
        gemm(false, false, B, D, F, in.data(), P(embedId()).value.data(), w.embedPre.data());
        addRowVector(w.embedPre, P(embedId() + 1).value);
        w.h[0] = w.embedPre;
        relu(w.h[0]);
    } else {
        w.h[0].assign(in.begin(), in.end());
    }
    for (uint32_t j = 0; j < nb; ++j) {
        const size_t a = blockId(part_.firstBlock + j);
        fit(w.pre[j], size_t(B) * Hs);
        gemm(false, false, B, Hs, D, w.h[j].data(), P(a).value.data(), w.pre[j].data());
        w.act[j] = w.pre[j];
        relu(w.act[j]);
        std::vector<float>& out = w.h[j + 1];
        fit(out, size_t(B) * D);
        gemm(false, false, B, D, Hs, w.act[j].data(), P(a + 1).value.data(), out.data());
        allReduceTp(out);  // the row-split matrix's partial sums
        for (size_t i = 0; i < out.size(); ++i) out[i] += w.h[j][i];  // residual
    }
    if (!part_.head) return 0;
    fit(w.logits, size_t(B) * C);
    gemm(false, false, B, C, D, w.h[nb].data(), P(headId()).value.data(), w.logits.data());
    addRowVector(w.logits, P(headId() + 1).value);

    // Softmax cross-entropy; dlogits = (p - onehot) / (B x micro-batches), kept in logits.
    const float perSample = 1.0f / (float(B) * float(micro.count));
    double loss = 0;
    for (int i = 0; i < B; ++i) {
        float* row = &w.logits[size_t(i) * C];
        float mx = *std::max_element(row, row + C);
        double z = 0;
        for (int c = 0; c < C; ++c) z += std::exp(double(row[c] - mx));
        loss += std::log(z) - double(row[labels[i]] - mx);
        for (int c = 0; c < C; ++c) row[c] = float(std::exp(double(row[c] - mx)) / z) * perSample;
        row[labels[i]] -= perSample;
    }
    return loss / B;
}

void Model::backward(uint32_t slot, std::span<const float> outputGrad, const std::function<void(size_t)>& gradReadyOnLast,
                     MicroBatch micro) {
    const ModelShape& s = shape_;
    Workspace& w = ws_.at(slot);
    const uint32_t nb = part_.blocks();
    const int B = int(w.h[0].size() / s.width), F = int(s.features), D = int(s.width), Hs = int(hiddenShard_),
              C = int(s.classes);
    const bool acc = micro.index > 0;  // add to the gradients of the step's earlier micro-batches
    auto gradReady = [&](size_t id) {
        if (micro.last()) gradReadyOnLast(id);
    };
    auto P = [&](size_t i) -> Parameter& { return params_[i]; };
    std::vector<float>& dh = w.dh;
    fit(dh, size_t(B) * D);
    // Backward: each gradient is handed over the moment it is final.
    if (part_.head) {
        const std::vector<float>& dlogits = w.logits;
        gemm(true, false, D, C, B, w.h[nb].data(), dlogits.data(), P(headId()).grad.data(), acc);
        gradReady(headId());
        sumRows(dlogits, P(headId() + 1).grad, acc);
        gradReady(headId() + 1);
        gemm(false, true, B, D, C, dlogits.data(), P(headId()).value.data(), dh.data());
    } else {
        std::copy(outputGrad.begin(), outputGrad.end(), dh.begin());
    }
    for (uint32_t j = nb; j-- > 0;) {
        const size_t a = blockId(part_.firstBlock + j);
        gemm(true, false, Hs, D, B, w.act[j].data(), dh.data(), P(a + 1).grad.data(), acc);
        gradReady(a + 1);
        fit(w.dpre, size_t(B) * Hs);
        gemm(false, true, B, Hs, D, dh.data(), P(a + 1).value.data(), w.dpre.data());
        reluBackward(w.dpre, w.pre[j]);
        gemm(true, false, D, Hs, B, w.h[j].data(), w.dpre.data(), P(a).grad.data(), acc);
        gradReady(a);
        fit(w.dIn, size_t(B) * D);
        gemm(false, true, B, D, Hs, w.dpre.data(), P(a).value.data(), w.dIn.data());
        allReduceTp(w.dIn);  // the column-split matrix's input gradient
        for (size_t i = 0; i < dh.size(); ++i) dh[i] += w.dIn[i];
    }
    if (!part_.embed) {
        w.dInput = dh;  // for the previous stage; kept until the next step's backward of this slot
        return;
    }
    reluBackward(dh, w.embedPre);
    gemm(true, false, F, D, B, w.embedInput.data(), dh.data(), P(embedId()).grad.data(), acc);
    gradReady(embedId());
    sumRows(dh, P(embedId() + 1).grad, acc);
    gradReady(embedId() + 1);
}

std::span<const float> Model::output(uint32_t slot) const { return ws_.at(slot).h.back(); }
std::span<const float> Model::inputGrad(uint32_t slot) const { return ws_.at(slot).dInput; }

void Model::sgd(float lr) {
    for (Parameter& p : params_)
        for (size_t i = 0; i < p.value.size(); ++i) p.value[i] -= lr * p.grad[i];
}

}  // namespace train_mlp
