// What the peer harnesses share with hostccl's perf tools: the flags (-b -e -f -n
// -w -c), the size sweep, exactly predictable fp32 inputs and the nccl-tests table,
// so bench/compare.sh reads every library's output with one parser. Header-only:
// each harness is one file built against its own library.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace peer {

struct Options {
    std::string collective = "allreduce";
    uint64_t minBytes = 8, maxBytes = 64 << 20;
    double factor = 2;
    int iters = 20, warmup = 5, check = 1;
};

inline uint64_t parseSize(const char* s) {
    char* end = nullptr;
    double v = std::strtod(s, &end);
    switch (end && *end ? (*end | 0x20) : 0) {
        case 'k': return uint64_t(v * 1024);
        case 'm': return uint64_t(v * 1048576);
        case 'g': return uint64_t(v * 1073741824);
        default: return uint64_t(v);
    }
}

// argv: <collective> [-b N] [-e N] [-f F] [-n N] [-w N] [-c 0|1]; other flags are
// left to the harness (`rest`).
inline bool parse(int argc, char** argv, Options* o, std::vector<std::string>* rest) {
    if (argc < 2) return false;
    o->collective = argv[1];
    for (int i = 2; i < argc; ++i) {
        std::string a = argv[i];
        bool hasValue = i + 1 < argc;
        if (a == "-b" && hasValue) o->minBytes = parseSize(argv[++i]);
        else if (a == "-e" && hasValue) o->maxBytes = parseSize(argv[++i]);
        else if (a == "-f" && hasValue) o->factor = std::atof(argv[++i]);
        else if (a == "-n" && hasValue) o->iters = std::atoi(argv[++i]);
        else if (a == "-w" && hasValue) o->warmup = std::atoi(argv[++i]);
        else if (a == "-c" && hasValue) o->check = std::atoi(argv[++i]);
        else rest->push_back(a);
    }
    return o->factor > 1 && o->minBytes <= o->maxBytes;
}

inline std::vector<uint64_t> sweep(const Options& o) {
    std::vector<uint64_t> s;
    for (uint64_t b = o.minBytes; b <= o.maxBytes; b = uint64_t(double(b) * o.factor)) {
        s.push_back(b);
        if (uint64_t(double(b) * o.factor) <= b) break;
    }
    return s;
}

// Shapes as in hostccl's perf tools: the API count for `elems` fp32 elements, the
// buffer sizes, and nccl-tests' busbw factor.
struct Shape {
    uint64_t count, sendElems, recvElems;
    double busFactor;
    bool reduces, inPlace;
};

inline bool shapeOf(const std::string& c, uint64_t elems, int n, Shape* s) {
    uint64_t per = elems / uint64_t(n);
    double share = n > 1 ? double(n - 1) / n : 0;
    if (c == "allreduce") *s = {elems, elems, elems, 2 * share, true, true};
    else if (c == "allgather") *s = {per, per, per * n, share, false, true};
    else if (c == "reducescatter") *s = {per, per * n, per, share, true, true};
    else if (c == "broadcast") *s = {elems, elems, elems, 1, false, true};
    else if (c == "reduce") *s = {elems, elems, elems, 1, true, true};
    else if (c == "alltoall") *s = {per, per * n, per * n, share, false, false};
    else if (c == "barrier") *s = {0, 0, 0, 0, false, false};  // the size is ignored: time only
    else return false;
    return true;
}

// Small exact integers, so every library's sum is exact in fp32.
inline float inputValue(int rank, uint64_t i) { return float((rank + i) % 7 + 1); }
// What rank `from` sends to rank `to` at element i of an all-to-all among n ranks.
inline float sentValue(int from, int to, int n, uint64_t i) { return inputValue(from * n + to, i); }
// The sum over n ranks of their inputs at element i.
inline float expectedSum(int n, uint64_t i) {
    float v = 0;
    for (int r = 0; r < n; ++r) v += inputValue(r, i);
    return v;
}

// The inputs of rank `rank` of `n` for collective `c` (root 0), written where an
// MPI-style library reads them: in place, the input is the output buffer (an
// all-gather's at the rank's own block); a broadcast has one buffer.
inline void fillInputs(const std::string& c, float* send, float* recv, const Shape& s, bool inPlace, int rank, int n) {
    float* in = send;
    if (inPlace && c == "allgather") in = recv + uint64_t(rank) * s.count;
    if ((inPlace && c != "allgather") || c == "broadcast") in = recv;
    uint64_t count = c == "allgather" ? s.count : s.sendElems;
    for (uint64_t i = 0; i < count; ++i) {
        if (c == "alltoall") in[i] = sentValue(rank, int(i / s.count), n, i % s.count);
        else if (c == "broadcast") in[i] = rank == 0 ? inputValue(0, i) : 0;
        else in[i] = inputValue(rank, i);
    }
}

// Wrong elements in `out` on `rank` of `n` after collective `c` with the inputs
// above (broadcast and reduce use root 0; reduce-scatter results start at out[0]).
inline uint64_t countWrong(const std::string& c, const float* out, const Shape& s, int rank, int n) {
    uint64_t wrong = 0;
    if (c == "allreduce" || (c == "reduce" && rank == 0))
        for (uint64_t i = 0; i < s.count; ++i) wrong += out[i] != expectedSum(n, i);
    if (c == "reducescatter")
        for (uint64_t i = 0; i < s.count; ++i) wrong += out[i] != expectedSum(n, uint64_t(rank) * s.count + i);
    if (c == "broadcast")
        for (uint64_t i = 0; i < s.count; ++i) wrong += out[i] != inputValue(0, i);
    if (c == "allgather")
        for (uint64_t i = 0; i < s.recvElems; ++i) wrong += out[i] != inputValue(int(i / s.count), i % s.count);
    if (c == "alltoall")
        for (uint64_t i = 0; i < s.recvElems; ++i) wrong += out[i] != sentValue(int(i / s.count), rank, n, i % s.count);
    return wrong;
}

inline void printHeader(const char* library, const Options& o, int n) {
    std::printf("# %s %s_perf: nranks %d minBytes %lu maxBytes %lu step: %g(factor) warmup iters: %d iters: %d validation: %d\n",
                library, o.collective.c_str(), n, (unsigned long)o.minBytes, (unsigned long)o.maxBytes, o.factor,
                o.warmup, o.iters, o.check);
    std::printf("#\n# %10s  %12s  %8s  %6s  %6s  %9s %8s %8s %5s %9s %8s %8s %5s\n", "size", "count", "type", "redop",
                "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong");
}

// us[2] and wrong[2]: out-of-place and in-place, already combined over ranks.
inline void printRow(const Options& o, const Shape& s, double us[2], uint64_t wrong[2]) {
    uint64_t bytes = (s.sendElems > s.recvElems ? s.sendElems : s.recvElems) * 4;
    std::printf("  %10lu  %12lu  %8s  %6s  %6d", (unsigned long)bytes, (unsigned long)s.count, "fp32",
                s.reduces ? "sum" : "none", o.collective == "broadcast" || o.collective == "reduce" ? 0 : -1);
    for (int c = 0; c < 2; ++c) {
        if (c == 1 && !s.inPlace) {
            std::printf("  %9s %8s %8s %5s", "n/a", "n/a", "n/a", "n/a");
            continue;
        }
        double algbw = us[c] > 0 ? double(bytes) / us[c] / 1e3 : 0;
        std::printf("  %9.2f %8.2f %8.2f %5lu", us[c], algbw, algbw * s.busFactor, (unsigned long)wrong[c]);
    }
    std::printf("\n");
}

}  // namespace peer
