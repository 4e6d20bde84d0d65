// Elastic data-parallel training that survives the loss of a rank.
//
// Each rank holds a shard of a generated regression set (every sample is a pure
// function of its index, so any rank can regenerate any shard) and trains a linear
// model by full-batch gradient descent: per step, the ranks allreduce their gradient
// sums and sample counts and apply the same update. One rank can be told to die
// (SIGKILL) in the middle of a step. The others see the allreduce fail, shrink the
// communicator to the survivors (HostcclCommShrink: no new root info), agree on the
// last step every survivor completed (an allreduce of the minimum), roll back to it,
// re-divide the data among themselves and carry on. Because the gradient always
// covers the whole data set, the final model must equal a serial run's up to
// rounding, and every survivor must hold the same parameters: both are checked.
//
// Started by run.sh (4 processes, torchrun-style RANK/WORLD_SIZE/MASTER_ADDR/PORT):
//   elastic_example [--steps N] [--kill-rank R] [--kill-step S]
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "acl/acl.h"
#include "hccl/hccl.h"
#include "hostccl/hostccl.h"

namespace {

const uint64_t kSamples = 20000;
const int kFeatures = 16;
const double kRate = 0.1;

struct Options {
    int steps = 60;
    int killRank = 2;  // -1: nobody dies
    int killStep = 26;  // the step in which it dies
};

// Deterministic pseudo-random numbers from an index (splitmix64).
double noise(uint64_t i) {
    uint64_t z = i + 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    return double(z >> 11) / double(1ULL << 53) - 0.5;
}

// Sample i: features x and target y = w_true . x + noise.
void sample(uint64_t i, double* x, double* y) {
    double t = 0;
    for (int f = 0; f < kFeatures; ++f) {
        x[f] = noise(i * 131 + f);
        t += (f + 1) * 0.25 * x[f];
    }
    *y = t + 0.01 * noise(i * 131 + 97);
}

// Gradient sum of the squared loss over samples [lo, hi), and the loss sum.
void gradient(const std::vector<double>& w, uint64_t lo, uint64_t hi, double* grad, double* loss) {
    std::memset(grad, 0, sizeof(double) * kFeatures);
    *loss = 0;
    double x[kFeatures], y;
    for (uint64_t i = lo; i < hi; ++i) {
        sample(i, x, &y);
        double err = -y;
        for (int f = 0; f < kFeatures; ++f) err += w[f] * x[f];
        for (int f = 0; f < kFeatures; ++f) grad[f] += err * x[f];
        *loss += 0.5 * err * err;
    }
}

struct Member {
    HcclComm comm = nullptr;
    uint32_t rank = 0, size = 1;
    std::vector<uint32_t> worldRanks;  // world rank of each member, in order
};

// One step on `m`: every member's gradient over its share, summed; false if the
// collective failed.
bool step(const Member& m, aclrtStream stream, std::vector<double>& w, double* meanLoss) {
    const uint64_t lo = kSamples * m.rank / m.size, hi = kSamples * (m.rank + 1) / m.size;
    std::vector<double> buf(kFeatures + 2);
    gradient(w, lo, hi, buf.data(), &buf[kFeatures]);
    buf[kFeatures + 1] = double(hi - lo);
    if (HcclAllReduce(buf.data(), buf.data(), buf.size(), HCCL_DATA_TYPE_FP64, HCCL_REDUCE_SUM, m.comm, stream) != 0)
        return false;
    if (aclrtSynchronizeStream(stream) != 0) return false;
    for (int f = 0; f < kFeatures; ++f) w[f] -= kRate * buf[f] / buf[kFeatures + 1];
    *meanLoss = buf[kFeatures] / buf[kFeatures + 1];
    return true;
}

int64_t allReduceI64(const Member& m, aclrtStream stream, int64_t v, HcclReduceOp op) {
    if (HcclAllReduce(&v, &v, 1, HCCL_DATA_TYPE_INT64, op, m.comm, stream) != 0 || aclrtSynchronizeStream(stream) != 0) {
        std::fprintf(stderr, "allreduce on the shrunk communicator failed\n");
        std::exit(1);
    }
    return v;
}

// The member the failure is blamed on: every survivor's communicator names the same
// rank when a peer dies (its connections close on all of them at once).
std::vector<uint32_t> goneMembers(const Member& m) {
    HcclResult code = HCCL_SUCCESS;
    int32_t culprit = -1;
    char reason[512];
    HostcclCommGetFailure(m.comm, &code, &culprit, reason, sizeof reason);
    std::printf("rank %u: %s\n", m.worldRanks[m.rank], reason);
    if (culprit < 0) {
        std::fprintf(stderr, "the failure names no rank to exclude\n");
        std::exit(1);
    }
    return std::vector<uint32_t>{uint32_t(culprit)};
}

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i + 1 < argc; i += 2) {
        int v = std::atoi(argv[i + 1]);
        if (!std::strcmp(argv[i], "--steps")) o.steps = v;
        else if (!std::strcmp(argv[i], "--kill-rank")) o.killRank = v;
        else if (!std::strcmp(argv[i], "--kill-step")) o.killStep = v;
        else {
            std::fprintf(stderr, "unknown option %s\n", argv[i]);
            std::exit(2);
        }
    }
    return o;
}

}  // namespace

int main(int argc, char** argv) {
    const Options opt = parse(argc, argv);
    Member m;
    if (HostcclCommInitFromEnv(&m.comm) != HCCL_SUCCESS) return 1;
    HcclGetRankId(m.comm, &m.rank);
    HcclGetRankSize(m.comm, &m.size);
    const uint32_t worldRank = m.rank;
    for (uint32_t r = 0; r < m.size; ++r) m.worldRanks.push_back(r);
    aclrtStream stream = nullptr;
    aclrtCreateStream(&stream);

    std::vector<double> w(kFeatures, 0.0), before = w;  // parameters after the last finished step, and the one before
    int completed = 0;  // steps this rank finished
    double loss = 0;
    while (completed < opt.steps) {
        if (int(worldRank) == opt.killRank && completed + 1 == opt.killStep) {
            std::printf("rank %u: dying in step %d\n", worldRank, completed + 1);
            std::fflush(stdout);
            raise(SIGKILL);
        }
        std::vector<double> trial = w;
        if (step(m, stream, trial, &loss)) {
            before = w;  // kept: a slower survivor may not have finished this step
            w = trial;
            ++completed;
            if (m.rank == 0 && completed % 10 == 0) std::printf("step %d: loss %.6f on %u ranks\n", completed, loss, m.size);
            continue;
        }
        // The step failed: a rank is gone. Shrink, then agree where to resume.
        HcclResult why = HCCL_SUCCESS;
        HcclGetCommAsyncError(m.comm, &why);
        std::printf("rank %u: step %d failed (%s); shrinking\n", worldRank, completed + 1, HcclGetErrorString(why));
        std::vector<uint32_t> gone = goneMembers(m);
        Member next;
        if (HostcclCommShrink(m.comm, gone.data(), uint32_t(gone.size()), nullptr, &next.comm) != HCCL_SUCCESS) return 1;
        HcclCommDestroy(m.comm);
        HcclGetRankId(next.comm, &next.rank);
        HcclGetRankSize(next.comm, &next.size);
        for (uint32_t i = 0; i < m.size; ++i)
            if (std::find(gone.begin(), gone.end(), i) == gone.end()) next.worldRanks.push_back(m.worldRanks[i]);
        m = next;
        // Some survivors may have finished a step that others had not when the failure
        // reached them (they differ by at most one): resume from the last step all of
        // them finished.
        const int agreed = int(allReduceI64(m, stream, completed, HCCL_REDUCE_MIN));
        if (agreed < completed) w = before;
        completed = agreed;
        std::printf("rank %u: carrying on from step %d as rank %u of %u\n", worldRank, completed, m.rank, m.size);
    }

    // Every survivor holds the same parameters (bit for bit), equal to a serial run's.
    int64_t bits = 0;
    for (double v : w) {
        int64_t b;
        std::memcpy(&b, &v, sizeof b);
        bits ^= b * 31 + (bits << 7);
    }
    const bool same = allReduceI64(m, stream, bits, HCCL_REDUCE_MIN) == allReduceI64(m, stream, bits, HCCL_REDUCE_MAX);
    std::vector<double> serial(kFeatures, 0.0), grad(kFeatures);
    double serialLoss = 0, diff = 0;
    for (int s = 0; s < opt.steps; ++s) {
        gradient(serial, 0, kSamples, grad.data(), &serialLoss);
        for (int f = 0; f < kFeatures; ++f) serial[f] -= kRate * grad[f] / double(kSamples);
    }
    for (int f = 0; f < kFeatures; ++f) diff = std::max(diff, std::fabs(serial[f] - w[f]));
    const bool ok = same && diff < 1e-9;
    std::printf("rank %u: finished %d steps on %u ranks, loss %.6f, max difference from a serial run %.3g, "
                "parameters identical on every survivor: %s -> %s\n",
                worldRank, completed, m.size, loss, diff, same ? "yes" : "no", ok ? "consistent" : "INCONSISTENT");
    HcclCommDestroy(m.comm);
    aclrtDestroyStream(stream);
    return ok ? 0 : 1;
}
