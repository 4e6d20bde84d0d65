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

Model::Model(const ModelShape& s, hostccl::Communicator& tp, uint64_t seed) : shape_(s), tp_(tp) {
    const uint32_t t = tp.size(), me = tp.rank();
    if (s.hidden % t != 0) throw hostccl::Error(HCCL_E_PARA, "hidden width must be a multiple of the TP degree");
    hiddenShard_ = s.hidden / t;
    auto add = [&](const char* name, std::vector<float> v, bool sharded) {
        std::vector<float> g(v.size(), 0.0f);
        params_.push_back({name, std::move(v), std::move(g), sharded});
    };
    add("embed.w", initShard(seed + 1, s.features, s.width, true, 0, s.width, std::sqrt(2.0f / s.features)), false);
    add("embed.b", std::vector<float>(s.width, 0.0f), false);
    for (uint32_t k = 0; k < s.blocks; ++k) {
        add("block.a", initShard(seed + 10 + 2 * k, s.width, s.hidden, true, me * hiddenShard_, hiddenShard_,
                                 std::sqrt(2.0f / s.width)), true);
        add("block.b", initShard(seed + 11 + 2 * k, s.hidden, s.width, false, me * hiddenShard_, hiddenShard_,
                                 0.5f / std::sqrt(float(s.hidden))), true);
    }
    add("head.w", initShard(seed + 2, s.width, s.classes, true, 0, s.classes, std::sqrt(1.0f / s.width)), false);
    add("head.b", std::vector<float>(s.classes, 0.0f), false);
    const size_t head = 2 + 2 * s.blocks;
    backwardOrder_ = {head, head + 1};
    for (uint32_t k = s.blocks; k-- > 0;) {
        backwardOrder_.push_back(3 + 2 * k);  // block k's b, then its a
        backwardOrder_.push_back(2 + 2 * k);
    }
    backwardOrder_.push_back(0);
    backwardOrder_.push_back(1);
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
                   const std::function<void(size_t)>& gradReadyOnLast, MicroBatch micro) {
    const ModelShape& s = shape_;
    const bool acc = micro.index > 0;  // add to the gradients of the step's earlier micro-batches
    auto gradReady = [&](size_t id) {
        if (micro.last()) gradReadyOnLast(id);
    };
    const int B = int(batch), F = int(s.features), D = int(s.width), Hs = int(hiddenShard_), C = int(s.classes);
    if (micro.index == 0) tpWaitMs_ = 0;  // the whole step's waits
    auto P = [&](size_t i) -> Parameter& { return params_[i]; };
    const size_t head = 2 + 2 * s.blocks;
    Workspace& w = ws_;
    w.h.resize(s.blocks + 1), w.pre.resize(s.blocks), w.act.resize(s.blocks);

    // Forward, keeping what backward needs.
    fit(w.embedPre, size_t(B) * D);
    gemm(false, false, B, D, F, x.data(), P(0).value.data(), w.embedPre.data());
    addRowVector(w.embedPre, P(1).value);
    w.h[0] = w.embedPre;
    relu(w.h[0]);
    for (uint32_t k = 0; k < s.blocks; ++k) {
        fit(w.pre[k], size_t(B) * Hs);
        gemm(false, false, B, Hs, D, w.h[k].data(), P(2 + 2 * k).value.data(), w.pre[k].data());
        w.act[k] = w.pre[k];
        relu(w.act[k]);
        std::vector<float>& out = w.h[k + 1];
        fit(out, size_t(B) * D);
        gemm(false, false, B, D, Hs, w.act[k].data(), P(3 + 2 * k).value.data(), out.data());
        allReduceTp(out);  // the row-split matrix's partial sums
        for (size_t i = 0; i < out.size(); ++i) out[i] += w.h[k][i];  // residual
    }
    fit(w.logits, size_t(B) * C);
    gemm(false, false, B, C, D, w.h[s.blocks].data(), P(head).value.data(), w.logits.data());
    addRowVector(w.logits, P(head + 1).value);

    // Softmax cross-entropy; dlogits = (p - onehot) / (B x micro-batches).
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
    const std::vector<float>& dlogits = w.logits;

    // Backward: each gradient is handed over the moment it is final.
    gemm(true, false, D, C, B, w.h[s.blocks].data(), dlogits.data(), P(head).grad.data(), acc);
    gradReady(head);
    sumRows(dlogits, P(head + 1).grad, acc);
    gradReady(head + 1);
    std::vector<float>& dh = w.dh;
    fit(dh, size_t(B) * D);
    gemm(false, true, B, D, C, dlogits.data(), P(head).value.data(), dh.data());
    for (uint32_t k = s.blocks; k-- > 0;) {
        gemm(true, false, Hs, D, B, w.act[k].data(), dh.data(), P(3 + 2 * k).grad.data(), acc);
        gradReady(3 + 2 * k);
        fit(w.dpre, size_t(B) * Hs);
        gemm(false, true, B, Hs, D, dh.data(), P(3 + 2 * k).value.data(), w.dpre.data());
        reluBackward(w.dpre, w.pre[k]);
        gemm(true, false, D, Hs, B, w.h[k].data(), w.dpre.data(), P(2 + 2 * k).grad.data(), acc);
        gradReady(2 + 2 * k);
        fit(w.dIn, size_t(B) * D);
        gemm(false, true, B, D, Hs, w.dpre.data(), P(2 + 2 * k).value.data(), w.dIn.data());
        allReduceTp(w.dIn);  // the column-split matrix's input gradient
        for (size_t i = 0; i < dh.size(); ++i) dh[i] += w.dIn[i];
    }
    reluBackward(dh, w.embedPre);
    gemm(true, false, F, D, B, x.data(), dh.data(), P(0).grad.data(), acc);
    gradReady(0);
    sumRows(dh, P(1).grad, acc);
    gradReady(1);
    return loss / B;
}

void Model::sgd(float lr) {
    for (Parameter& p : params_)
        for (size_t i = 0; i < p.value.size(); ++i) p.value[i] -= lr * p.grad[i];
}

}  // namespace train_mlp
