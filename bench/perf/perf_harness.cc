#include "bench/perf/perf_harness.h"

#include <sys/resource.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <barrier>
#include <cstdio>
#include <map>
#include <thread>
#include <vector>

#include "common/datatype.h"
#include "hostccl/hostccl.h"

namespace hostccl::perf {

namespace {

uint64_t parseSize(const std::string& s) {
    size_t pos = 0;
    double v = std::stod(s, &pos);
    char unit = pos < s.size() ? static_cast<char>(std::toupper(s[pos])) : 0;
    double mul = unit == 'K' ? 1024.0 : unit == 'M' ? 1048576.0 : unit == 'G' ? 1073741824.0 : 1.0;
    return static_cast<uint64_t>(v * mul);
}

HcclDataType parseType(const std::string& s) {
    static const std::map<std::string, HcclDataType> names = {
        {"int8", HCCL_DATA_TYPE_INT8},   {"uint8", HCCL_DATA_TYPE_UINT8},   {"int16", HCCL_DATA_TYPE_INT16},
        {"uint16", HCCL_DATA_TYPE_UINT16}, {"int32", HCCL_DATA_TYPE_INT32}, {"uint32", HCCL_DATA_TYPE_UINT32},
        {"int64", HCCL_DATA_TYPE_INT64}, {"uint64", HCCL_DATA_TYPE_UINT64}, {"fp16", HCCL_DATA_TYPE_FP16},
        {"half", HCCL_DATA_TYPE_FP16},   {"fp32", HCCL_DATA_TYPE_FP32},     {"float", HCCL_DATA_TYPE_FP32},
        {"fp64", HCCL_DATA_TYPE_FP64},   {"double", HCCL_DATA_TYPE_FP64},   {"bfp16", HCCL_DATA_TYPE_BFP16},
        {"bf16", HCCL_DATA_TYPE_BFP16},  {"int128", HCCL_DATA_TYPE_INT128}};
    auto it = names.find(s);
    if (it == names.end()) throw CLI::ValidationError("-d", "unknown data type " + s);
    return it->second;
}

HcclReduceOp parseOp(const std::string& s) {
    if (s == "sum") return HCCL_REDUCE_SUM;
    if (s == "prod") return HCCL_REDUCE_PROD;
    if (s == "max") return HCCL_REDUCE_MAX;
    if (s == "min") return HCCL_REDUCE_MIN;
    throw CLI::ValidationError("-o", "unknown reduce op " + s);
}

struct Row {
    double us[2] = {0, 0};
    uint64_t wrong[2] = {0, 0};
    bool failed[2] = {false, false};
    bool skipped[2] = {false, false};  // in place where HCCL requires distinct buffers
};

// One rank's share of one size: out-of-place then in-place, each timed over
// `iters` calls between two events, then verified once with fresh inputs.
struct RankRunner {
    const PerfOp& op;
    const PerfOptions& o;
    HcclComm comm;
    aclrtStream stream;
    uint32_t rank;
    PerfMemory& memory;

    void measure(const Layout& l, int column, Row* row) {
        const bool inPlace = column == 1;
        if (inPlace && !op.inPlace) {
            row->skipped[column] = true;
            return;
        }
        const size_t es = dtypeSize(o.dtype);
        void *bufA = nullptr, *bufB = nullptr, *send = nullptr, *recv = nullptr;
        if (inPlace) {
            bufA = memory.get(0, std::max<uint64_t>({l.sendElems, l.recvElems, 1}) * es);
            if (bufA != nullptr) op.placeInPlace(static_cast<char*>(bufA), l, rank, es, &send, &recv);
        } else {
            send = bufA = memory.get(0, std::max<uint64_t>(l.sendElems, 1) * es);
            recv = bufB = memory.get(1, std::max<uint64_t>(l.recvElems, 1) * es);
        }
        if (bufA == nullptr || (!inPlace && bufB == nullptr)) {
            row->failed[column] = true;
            memory.put(0);
            memory.put(1);
            return;
        }
        aclrtEvent start, stop;
        aclrtCreateEvent(&start);
        aclrtCreateEvent(&stop);
        HcclResult rc = HCCL_SUCCESS;
        op.fill(send, recv, l, rank, o);
        for (int i = 0; i < o.warmup && rc == HCCL_SUCCESS; ++i) rc = op.call(send, recv, l, o, rank, comm, stream);
        aclrtRecordEvent(start, stream);
        for (int i = 0; i < o.iters && rc == HCCL_SUCCESS; ++i) rc = op.call(send, recv, l, o, rank, comm, stream);
        aclrtRecordEvent(stop, stream);
        int sync = aclrtSynchronizeStream(stream);
        float ms = 0;
        bool timed = aclrtEventElapsedTime(&ms, start, stop) == ACL_SUCCESS;
        row->us[column] = o.iters > 0 ? ms * 1000.0 / o.iters : 0;
        if (rc == HCCL_SUCCESS && sync == 0 && o.check) {
            op.fill(send, recv, l, rank, o);
            rc = op.call(send, recv, l, o, rank, comm, stream);
            sync = aclrtSynchronizeStream(stream);
            row->wrong[column] = op.verify(send, recv, l, rank, o);
        }
        row->failed[column] = rc != HCCL_SUCCESS || sync != 0 || !timed;
        aclrtDestroyEvent(start);
        aclrtDestroyEvent(stop);
        memory.put(0);
        memory.put(1);
    }
};

// The most bytes one buffer of any call of the sweep holds.
size_t largestBuffer(const PerfOp& op, const PerfOptions& o, const std::vector<uint64_t>& sizes, uint32_t nranks) {
    size_t largest = 0;
    for (uint64_t s : sizes) {
        const Layout l = op.layout(s / dtypeSize(o.dtype), nranks);
        largest = std::max<size_t>(largest, std::max<uint64_t>({l.sendElems, l.recvElems, 1}) * dtypeSize(o.dtype));
    }
    return largest;
}

// HostcclCommDescribe's text as comment lines, so table parsers skip it.
void printTopology(HcclComm comm) {
    std::vector<char> text(1 << 16);
    if (HostcclCommDescribe(comm, text.data(), text.size()) != HCCL_SUCCESS) return;
    std::string line;
    for (const char* p = text.data(); *p != '\0'; ++p) {
        if (*p != '\n') {
            line += *p;
            continue;
        }
        std::printf("# %s\n", line.c_str());
        line.clear();
    }
    std::printf("#\n");
}

void printHeader(const PerfOp& op, const PerfOptions& o) {
    if (o.hcclTestTable) {  // HCCL Test's layout
        std::printf("the minbytes is %lu, maxbytes is %lu, iters is %d, warmup_iters is %d\n", (unsigned long)o.minBytes,
                    (unsigned long)o.maxBytes, o.iters, o.warmup);
        std::printf("%-15s | %-12s | %-18s | %s\n", "data_size(Bytes):", "aveg_time(us):", "alg_bandwidth(GB/s):",
                    "check_result:");
        return;
    }
    std::printf("# hostccl %s_perf: nranks %u minBytes %lu maxBytes %lu step: %g(%s) warmup iters: %d iters: %d validation: %d\n",
                op.name, o.nranks, (unsigned long)o.minBytes, (unsigned long)o.maxBytes,
                o.stepFactor > 1 ? o.stepFactor : double(o.stepBytes), o.stepFactor > 1 ? "factor" : "bytes", o.warmup,
                o.iters, o.check);
    std::printf("#\n# %10s  %12s  %8s  %6s  %6s  %30s  %30s\n", "", "", "", "", "", "out-of-place", "in-place");
    std::printf("# %10s  %12s  %8s  %6s  %6s  %9s %8s %8s %5s %9s %8s %8s %5s\n", "size", "count", "type", "redop",
                "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong");
    std::printf("# %10s  %12s  %8s  %6s  %6s  %9s %8s %8s %5s %9s %8s %8s %5s\n", "(B)", "(elements)", "", "", "",
                "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
}

// The sizes in the order they run: the sweep once per cycle (-N).
std::vector<uint64_t> sweep(const PerfOptions& o) {
    std::vector<uint64_t> once;
    for (uint64_t s = o.minBytes; s <= o.maxBytes;) {
        once.push_back(s);
        uint64_t next = o.stepFactor > 1 ? static_cast<uint64_t>(double(s) * o.stepFactor) : s + o.stepBytes;
        if (next <= s) break;
        s = next;
    }
    std::vector<uint64_t> sizes;
    for (int c = 0; c < o.cycles; ++c) sizes.insert(sizes.end(), once.begin(), once.end());
    return sizes;
}

// Merges the ranks' rows (the slowest rank sets the time) and prints the table;
// non-zero when any value was wrong or any call failed.
int report(const PerfOp& op, const PerfOptions& o, const std::vector<uint64_t>& sizes,
           const std::vector<std::vector<Row>>& rows) {
    const size_t es = dtypeSize(o.dtype);
    bool anyWrong = false;
    double busSum = 0;
    for (size_t s = 0; s < sizes.size(); ++s) {
        Layout l = op.layout(sizes[s] / es, o.nranks);
        uint64_t bytes = std::max(l.sendElems, l.recvElems) * es;
        double us[2] = {0, 0};
        uint64_t wrong[2] = {0, 0};
        bool failed[2] = {false, false};
        for (const Row& row : rows[s])
            for (int c = 0; c < 2; ++c) {
                us[c] = std::max(us[c], row.us[c]);
                wrong[c] += row.wrong[c];
                failed[c] = failed[c] || row.failed[c];
            }
        anyWrong |= wrong[0] + wrong[1] > 0 || failed[0] || failed[1];
        if (o.hcclTestTable) {
            double gbs = us[0] > 0 ? double(bytes) / us[0] / 1e3 : 0;
            std::printf("%-17lu | %-14.2f | %-20.5f | %s\n", (unsigned long)bytes, us[0], gbs,
                        !o.check ? "NULL" : (wrong[0] || failed[0]) ? "failed" : "success");
            continue;
        }
        std::printf("  %10lu  %12lu  %8s  %6s  %6d", (unsigned long)bytes, (unsigned long)l.count, dtypeName(o.dtype),
                    op.reduces ? reduceOpName(o.op) : "none", op.hasRoot ? int(o.root) : -1);
        for (int c = 0; c < 2; ++c) {
            double algbw = us[c] > 0 ? double(bytes) / us[c] / 1e3 : 0, busbw = algbw * op.busFactor(o.nranks);
            if (c == (op.inPlace ? 1 : 0)) busSum += busbw;
            if (c == 1 && !op.inPlace)
                std::printf("  %9s %8s %8s %5s", "n/a", "n/a", "n/a", "n/a");
            else if (failed[c])
                std::printf("  %9s %8s %8s %5s", "error", "-", "-", "-");
            else
                std::printf("  %9.2f %8.2f %8.2f %5lu", us[c], algbw, busbw, (unsigned long)wrong[c]);
        }
        std::printf("\n");
    }
    if (!o.hcclTestTable) {
        std::printf("# Out of bounds values : %s\n", anyWrong ? "FAILED" : "0 OK");
        std::printf("# Avg bus bandwidth    : %g \n#\n", sizes.empty() ? 0.0 : busSum / double(sizes.size()));
    }
    return anyWrong ? 1 : 0;
}

}  // namespace

namespace {

// -p N asks for N ranks, one per logical device: provide the devices (unless the
// user set HOSTCCL_DEVICE_COUNT) and the descriptors the links take (soft limit up
// to the hard one), before anything reads either.
// False (with the reason printed) when this process cannot hold the links.
bool provideForLocalRanks(uint32_t nranks) {
    if (std::getenv("HOSTCCL_DEVICE_COUNT") == nullptr && nranks > 8)
        setenv("HOSTCCL_DEVICE_COUNT", std::to_string(nranks).c_str(), 1);
    rlimit files{};
    if (getrlimit(RLIMIT_NOFILE, &files) != 0) return true;
    if (files.rlim_cur < files.rlim_max) {
        files.rlim_cur = files.rlim_max;
        setrlimit(RLIMIT_NOFILE, &files);
    }
    // Ranks of one process link through memory, without descriptors, unless TCP is
    // forced; then every pair the algorithms use holds a socket with both ends here,
    // all pairs with HOSTCCL_CONNECT_ALL=1. Bootstrap holds two per rank for a moment.
    const char* transport = std::getenv("HOSTCCL_TRANSPORT");
    const char* all = std::getenv("HOSTCCL_CONNECT_ALL");
    const bool sockets = transport != nullptr && std::string(transport) != "auto";
    const uint64_t pairs = all != nullptr && std::string(all) == "1" ? uint64_t(nranks) * (nranks - 1) / 2
                                                                      : uint64_t(nranks) * 16;
    const uint64_t needed = (sockets ? 2 * pairs : 0) + 4ull * nranks + 64;
    if (files.rlim_cur != RLIM_INFINITY && needed > files.rlim_cur) {
        std::fprintf(stderr,
                     "-p %u: %u ranks in one process over sockets need about %llu file descriptors; "
                     "this process may open %llu (ulimit -n; the hard limit is the most it can raise itself to). "
                     "Raise the limit, or run fewer local ranks, or start ranks as processes under a launcher.\n",
                     nranks, nranks, static_cast<unsigned long long>(needed),
                     static_cast<unsigned long long>(files.rlim_cur));
        return false;
    }
    return true;
}

// Ranks as threads of this process (-p N).
int runThreads(const PerfOp& op, const PerfOptions& o, const std::vector<uint64_t>& sizes) {
    if (!provideForLocalRanks(o.nranks)) return 2;
    std::vector<HcclComm> comms(o.nranks);
    std::vector<int32_t> devices(o.nranks);
    for (uint32_t i = 0; i < o.nranks; ++i) devices[i] = int32_t(i);
    if (HcclResult rc = HcclCommInitAll(o.nranks, devices.data(), comms.data()); rc != HCCL_SUCCESS) {
        std::fprintf(stderr, "HcclCommInitAll failed: %s\n", HcclGetErrorString(rc));
        return 1;
    }
    if (o.topology) printTopology(comms[0]);
    printHeader(op, o);
    std::vector<std::vector<Row>> rows(sizes.size(), std::vector<Row>(o.nranks));
    std::vector<std::thread> threads;
    for (uint32_t r = 0; r < o.nranks; ++r) {
        threads.emplace_back([&, r] {
            aclrtSetDevice(int32_t(r));
            aclrtStream stream;
            aclrtCreateStream(&stream);
            PerfMemory memory(o.memory, comms[r], largestBuffer(op, o, sizes, o.nranks));
            RankRunner runner{op, o, comms[r], stream, r, memory};
            for (size_t s = 0; s < sizes.size(); ++s)
                for (int column = 0; column < 2; ++column)
                    runner.measure(op.layout(sizes[s] / dtypeSize(o.dtype), o.nranks), column, &rows[s][r]);
            aclrtDestroyStream(stream);
        });
    }
    for (auto& t : threads) t.join();
    for (HcclComm c : comms) HcclCommDestroy(c);
    return report(op, o, sizes, rows);
}

// One rank per process under a launcher (mpirun, mpiexec, srun, torchrun). Each
// size's results are combined across ranks with the library's own AllReduce.
int runProcess(const PerfOp& op, PerfOptions o, const std::vector<uint64_t>& sizes) {
    HcclComm comm = nullptr;
    if (HcclResult rc = HostcclCommInitFromEnv(&comm); rc != HCCL_SUCCESS) {
        std::fprintf(stderr, "HostcclCommInitFromEnv failed: %s\n", HcclGetErrorString(rc));
        return 1;
    }
    uint32_t rank = 0;
    HcclGetRankId(comm, &rank);
    HcclGetRankSize(comm, &o.nranks);
    if (o.root >= o.nranks) {
        if (rank == 0) std::fprintf(stderr, "-r %u: root must be below the rank count %u\n", o.root, o.nranks);
        HcclCommDestroy(comm);
        return 2;
    }
    aclrtStream stream;
    aclrtCreateStream(&stream);
    if (rank == 0 && o.topology) printTopology(comm);
    if (rank == 0) printHeader(op, o);
    PerfMemory memory(o.memory, comm, largestBuffer(op, o, sizes, o.nranks));
    RankRunner runner{op, o, comm, stream, rank, memory};
    std::vector<std::vector<Row>> rows(sizes.size(), std::vector<Row>(1));
    for (size_t s = 0; s < sizes.size(); ++s) {
        Row& row = rows[s][0];
        for (int column = 0; column < 2; ++column)
            runner.measure(op.layout(sizes[s] / dtypeSize(o.dtype), o.nranks), column, &row);
        uint64_t counts[4] = {row.wrong[0], row.wrong[1], uint64_t(row.failed[0]), uint64_t(row.failed[1])};
        HcclAllReduce(row.us, row.us, 2, HCCL_DATA_TYPE_FP64, HCCL_REDUCE_MAX, comm, stream);
        HcclAllReduce(counts, counts, 4, HCCL_DATA_TYPE_UINT64, HCCL_REDUCE_SUM, comm, stream);
        aclrtSynchronizeStream(stream);
        row.wrong[0] = counts[0], row.wrong[1] = counts[1];
        row.failed[0] = counts[2] > 0, row.failed[1] = counts[3] > 0;
    }
    aclrtDestroyStream(stream);
    HcclCommDestroy(comm);
    if (rank != 0) {  // rank 0 prints; every rank exits with the same verdict
        bool bad = false;
        for (auto& r : rows) bad |= r[0].wrong[0] + r[0].wrong[1] > 0 || r[0].failed[0] || r[0].failed[1];
        return bad ? 1 : 0;
    }
    return report(op, o, sizes, rows);
}

}  // namespace

int runPerf(const PerfOp& op, int argc, char** argv) {
    PerfOptions o;
    CLI::App app{std::string("hostccl ") + op.name + "_perf (nccl-tests style). Without -p under mpirun, mpiexec, "
                 "srun or torchrun, each process is one rank (see HostcclCommInitFromEnv)."};
    std::string minB = "32M", maxB = "32M", step = "1M", dtype = "float", redop = "sum", memory = "malloc";
    app.add_option("-b,--minbytes", minB, "smallest size (K/M/G suffixes)");
    app.add_option("-e,--maxbytes", maxB, "largest size");
    app.add_option("-i,--stepbytes", step, "additive step");
    app.add_option("-f,--stepfactor", o.stepFactor, "multiplicative step (> 1)");
    app.add_option("-n,--iters", o.iters, "timed iterations")->check(CLI::NonNegativeNumber);
    app.add_option("-w,--warmup_iters", o.warmup, "warm-up iterations")->check(CLI::NonNegativeNumber);
    app.add_option("-N,--run_cycles", o.cycles, "run the whole sweep this many times, a row per size each time")
        ->check(CLI::Range(1, 1 << 20));
    app.add_option("-c,--check", o.check, "verify results (0/1)");
    app.add_option("-d,--datatype", dtype, "data type");
    app.add_option("-o,--op", redop, "reduce op: sum, prod, max, min");
    app.add_option("-r,--root", o.root, "root rank");
    auto* ranksOpt = app.add_option("-p,--nranks", o.nranks, "local ranks to start as threads")->check(CLI::Range(1u, 1024u));
    app.add_option("--memory", memory,
                   "buffers from malloc (aclrtMalloc), vmm (ACL virtual memory) or window (a registered symmetric window)");
    app.add_flag("--topology", o.topology, "print hosts, ranks, links and the algorithm per collective and size first");
    app.add_flag("--hccl-test", o.hcclTestTable, "print HCCL Test's table (data_size, aveg_time, alg_bandwidth, check_result)");
    try {
        app.parse(argc, argv);
        o.minBytes = parseSize(minB);
        o.maxBytes = parseSize(maxB);
        o.stepBytes = parseSize(step);
        o.dtype = parseType(dtype);
        o.op = parseOp(redop);
        o.memory = parseMemoryMode(memory);
        if (o.minBytes > o.maxBytes) throw CLI::ValidationError("-b", "minbytes exceeds maxbytes");
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
    }
    uint32_t launcherRank, launcherSize, localRank;
    if (ranksOpt->count() == 0 && HostcclGetLauncherRank(&launcherRank, &launcherSize, &localRank) == HCCL_SUCCESS)
        return runProcess(op, o, sweep(o));
    if (o.root >= o.nranks) {
        std::fprintf(stderr, "-r %u: root must be below the rank count %u\n", o.root, o.nranks);
        return 2;
    }
    return runThreads(op, o, sweep(o));
}

}  // namespace hostccl::perf
