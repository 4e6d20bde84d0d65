// Intel oneCCL's collectives on host buffers, measured the way hostccl's perf tools
// measure themselves; built by bench/compare.sh against the oneccl-cpu wheel.
// One process per rank; the communicator's KVS is bootstrapped the documented way:
// rank 0 creates the main KVS and publishes its address (here through a file all
// ranks can read), the others create theirs from that address.
//   oneccl_perf allreduce -b 8 -e 64M -f 2 --rank R --size N --kvs FILE
// Under an MPI launcher (CCL_ATL_TRANSPORT=mpi) rank and size may come from
// PMI_RANK / PMI_SIZE instead.
#include <oneapi/ccl.hpp>

#include <chrono>
#include <fstream>
#include <thread>

#include "peer_table.h"

namespace {

int gRank = 0, gSize = 1;

void fill(const std::string& c, float* send, float* recv, const peer::Shape& s, bool inPlace) {
    peer::fillInputs(c, send, recv, s, inPlace, gRank, gSize);
}

void call(const std::string& c, float* send, float* recv, const peer::Shape& s, bool inPlace,
          const ccl::communicator& comm) {
    const size_t n = s.count;
    const float* in = inPlace ? (c == "allgather" ? recv + uint64_t(gRank) * n : recv) : send;
    if (c == "allreduce") ccl::allreduce(in, recv, n, ccl::reduction::sum, comm).wait();
    if (c == "allgather") ccl::allgather(in, recv, n, comm).wait();
    if (c == "reducescatter") ccl::reduce_scatter(in, recv, n, ccl::reduction::sum, comm).wait();
    if (c == "broadcast") ccl::broadcast(recv, n, 0, comm).wait();
    if (c == "reduce") ccl::reduce(in, recv, n, ccl::reduction::sum, 0, comm).wait();
    if (c == "alltoall") ccl::alltoall(send, recv, n, comm).wait();
    if (c == "barrier") ccl::barrier(comm).wait();
}

void measure(const peer::Options& o, const peer::Shape& s, bool inPlace, const ccl::communicator& comm, double* us,
             uint64_t* wrong) {
    std::vector<float> send(s.sendElems + 1), recv(std::max(s.recvElems, inPlace ? s.sendElems : 0) + 1);
    fill(o.collective, send.data(), recv.data(), s, inPlace);
    for (int i = 0; i < o.warmup; ++i) call(o.collective, send.data(), recv.data(), s, inPlace, comm);
    ccl::barrier(comm).wait();
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < o.iters; ++i) call(o.collective, send.data(), recv.data(), s, inPlace, comm);
    *us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() /
          (o.iters > 0 ? o.iters : 1);
    *wrong = 0;
    if (o.check) {
        fill(o.collective, send.data(), recv.data(), s, inPlace);
        call(o.collective, send.data(), recv.data(), s, inPlace, comm);
        *wrong = peer::countWrong(o.collective, recv.data(), s, gRank, gSize);
    }
}

// Rank 0 publishes the main KVS's address; the others wait for the file (written
// whole, then renamed, so no rank reads half of it).
std::shared_ptr<ccl::kvs> bootstrap(const std::string& file) {
    if (gRank == 0) {
        auto kvs = ccl::create_main_kvs();
        ccl::kvs::address_type addr = kvs->get_address();
        const std::string tmp = file + ".tmp";
        std::ofstream(tmp, std::ios::binary).write(reinterpret_cast<const char*>(addr.data()), addr.size());
        std::rename(tmp.c_str(), file.c_str());
        return kvs;
    }
    ccl::kvs::address_type addr;
    const auto giveUp = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    for (;;) {
        std::ifstream in(file, std::ios::binary);
        if (in.read(reinterpret_cast<char*>(addr.data()), addr.size())) break;
        if (std::chrono::steady_clock::now() > giveUp) {
            std::fprintf(stderr, "oneccl_perf: rank 0 published no KVS address in %s within 60 s\n", file.c_str());
            std::exit(1);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return ccl::create_kvs(addr);
}

int envInt(const char* name, int otherwise) {
    const char* v = std::getenv(name);
    return v != nullptr ? std::atoi(v) : otherwise;
}

}  // namespace

int main(int argc, char** argv) {
    peer::Options o;
    std::vector<std::string> rest;
    peer::Shape probe;
    std::string kvsFile;
    gRank = envInt("PMI_RANK", 0);
    gSize = envInt("PMI_SIZE", 1);
    bool ok = peer::parse(argc, argv, &o, &rest) && peer::shapeOf(o.collective, 1, 1, &probe);
    for (size_t i = 0; ok && i + 1 < rest.size(); ++i) {
        if (rest[i] == "--rank") gRank = std::atoi(rest[++i].c_str());
        else if (rest[i] == "--size") gSize = std::atoi(rest[++i].c_str());
        else if (rest[i] == "--kvs") kvsFile = rest[++i];
    }
    if (!ok || kvsFile.empty() || gRank < 0 || gRank >= gSize) {
        std::fprintf(stderr, "usage: oneccl_perf allreduce|allgather|reducescatter|broadcast|reduce|alltoall|barrier "
                             "[-b -e -f -n -w -c] --kvs FILE [--rank R --size N]\n");
        return 2;
    }
    ccl::init();
    auto kvs = bootstrap(kvsFile);
    auto comm = ccl::create_communicator(gSize, gRank, kvs);
    const std::string name = std::string("oneCCL ") + ccl::get_library_version().full;
    if (gRank == 0) peer::printHeader(name.c_str(), o, gSize);
    bool anyWrong = false;
    for (uint64_t bytes : peer::sweep(o)) {
        peer::Shape s;
        peer::shapeOf(o.collective, bytes / 4, gSize, &s);
        double us[2] = {0, 0}, maxUs[2] = {0, 0};
        uint64_t wrong[2] = {0, 0}, allWrong[2] = {0, 0};
        for (int c = 0; c < 2; ++c)
            if (c == 0 || s.inPlace) measure(o, s, c == 1, comm, &us[c], &wrong[c]);
        ccl::allreduce(us, maxUs, 2, ccl::reduction::max, comm).wait();
        ccl::allreduce(wrong, allWrong, 2, ccl::reduction::sum, comm).wait();
        if (gRank == 0) peer::printRow(o, s, maxUs, allWrong);
        anyWrong |= allWrong[0] + allWrong[1] > 0;
    }
    if (gRank == 0) std::printf("# Out of bounds values : %s\n", anyWrong ? "FAILED" : "0 OK");
    std::fflush(stdout);
    return anyWrong ? 1 : 0;
}
