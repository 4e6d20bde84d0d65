// Gloo's collectives over its TCP transport, measured like hostccl's perf tools.
// One process per rank, meeting through a FileStore directory:
//   gloo_perf allreduce --rank R --size N --store DIR [--host IP] [-b -e -f -n -w -c]
// Gloo has out-of-place forms only (its reduce-scatter is in place), so the
// in-place columns read n/a.
#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/alltoall.h>
#include <gloo/barrier.h>
#include <gloo/broadcast.h>
#include <gloo/reduce.h>
#include <gloo/reduce_scatter.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/transport/tcp/device.h>

#include <algorithm>
#include <chrono>
#include <memory>

#include "peer_table.h"

namespace {

using Ctx = std::shared_ptr<gloo::Context>;
int gRank = 0, gSize = 1;

float sent(int from, int to, uint64_t i) { return peer::sentValue(from, to, gSize, i); }

void sumFn(void* out, const void* a, const void* b, size_t n) {
    auto* o = static_cast<float*>(out);
    auto* x = static_cast<const float*>(a);
    auto* y = static_cast<const float*>(b);
    for (size_t i = 0; i < n; ++i) o[i] = x[i] + y[i];
}

void call(const Ctx& ctx, const std::string& c, std::vector<float>& send, std::vector<float>& recv, const peer::Shape& s) {
    if (c == "allreduce") {
        gloo::AllreduceOptions o(ctx);
        o.setInput(send.data(), s.count);
        o.setOutput(recv.data(), s.count);
        o.setReduceFunction(sumFn);
        gloo::allreduce(o);
    } else if (c == "allgather") {
        gloo::AllgatherOptions o(ctx);
        o.setInput(send.data(), s.count);
        o.setOutput(recv.data(), s.recvElems);
        gloo::allgather(o);
    } else if (c == "reducescatter") {  // in place; rank r's reduced block lands at the start
        std::copy(send.begin(), send.begin() + long(s.sendElems), recv.begin());
        std::vector<int> blocks(size_t(gSize), int(s.count));
        gloo::ReduceScatterHalvingDoubling<float>(ctx, {recv.data()}, int(s.sendElems), blocks).run();
    } else if (c == "broadcast") {
        gloo::BroadcastOptions o(ctx);
        if (gRank == 0) o.setInput(send.data(), s.count);
        o.setOutput(recv.data(), s.count);
        o.setRoot(0);
        gloo::broadcast(o);
    } else if (c == "reduce") {
        gloo::ReduceOptions o(ctx);
        o.setInput(send.data(), s.count);
        o.setOutput(recv.data(), s.count);
        o.setRoot(0);
        o.setReduceFunction(sumFn);
        gloo::reduce(o);
    } else if (c == "alltoall") {
        gloo::AlltoallOptions o(ctx);
        o.setInput(send.data(), s.sendElems);
        o.setOutput(recv.data(), s.recvElems);
        gloo::alltoall(o);
    } else if (c == "barrier") {
        gloo::BarrierOptions o(ctx);
        gloo::barrier(o);
    }
}

void fill(const std::string& c, std::vector<float>& send, const peer::Shape& s) {
    for (uint64_t i = 0; i < s.sendElems; ++i)
        send[i] = c == "alltoall" ? sent(gRank, int(i / s.count), i % s.count) : peer::inputValue(gRank, i);
}


double combine(const Ctx& ctx, double v, bool max) {
    gloo::AllreduceOptions o(ctx);
    double out = 0;
    o.setInput(&v, 1);
    o.setOutput(&out, 1);
    o.setReduceFunction([max](void* r, const void* a, const void* b, size_t) {
        double x = *static_cast<const double*>(a), y = *static_cast<const double*>(b);
        *static_cast<double*>(r) = max ? std::max(x, y) : x + y;
    });
    gloo::allreduce(o);
    return out;
}

}  // namespace

int main(int argc, char** argv) {
    peer::Options o;
    std::vector<std::string> rest;
    peer::Shape probe;
    std::string store, host = "127.0.0.1";
    bool ok = peer::parse(argc, argv, &o, &rest) && peer::shapeOf(o.collective, 1, 1, &probe);
    for (size_t i = 0; ok && i + 1 < rest.size(); i += 2) {
        if (rest[i] == "--rank") gRank = std::atoi(rest[i + 1].c_str());
        else if (rest[i] == "--size") gSize = std::atoi(rest[i + 1].c_str());
        else if (rest[i] == "--store") store = rest[i + 1];
        else if (rest[i] == "--host") host = rest[i + 1];
        else ok = false;
    }
    if (!ok || store.empty() || rest.size() % 2 != 0) {
        std::fprintf(stderr, "usage: gloo_perf <collective> --rank R --size N --store DIR [--host IP] [-b -e -f -n -w -c]\n");
        return 2;
    }
    gloo::transport::tcp::attr attr;
    attr.hostname = host;
    auto device = gloo::transport::tcp::CreateDevice(attr);
    gloo::rendezvous::FileStore fileStore(store);
    auto ctx = std::make_shared<gloo::rendezvous::Context>(gRank, gSize);
    ctx->connectFullMesh(fileStore, device);
    if (gRank == 0) peer::printHeader("Gloo", o, gSize);
    bool anyWrong = false;
    for (uint64_t bytes : peer::sweep(o)) {
        peer::Shape s;
        peer::shapeOf(o.collective, bytes / 4, gSize, &s);
        s.inPlace = false;
        std::vector<float> send(s.sendElems + 1), recv(std::max(s.recvElems, s.sendElems) + 1);
        fill(o.collective, send, s);
        for (int i = 0; i < o.warmup; ++i) call(ctx, o.collective, send, recv, s);
        gloo::BarrierOptions b(ctx);
        gloo::barrier(b);
        auto t0 = std::chrono::steady_clock::now();
        for (int i = 0; i < o.iters; ++i) call(ctx, o.collective, send, recv, s);
        double us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() /
                    std::max(o.iters, 1);
        uint64_t wrong = 0;
        if (o.check) {
            fill(o.collective, send, s);
            call(ctx, o.collective, send, recv, s);
            wrong = peer::countWrong(o.collective, recv.data(), s, gRank, gSize);
        }
        double times[2] = {combine(ctx, us, true), 0};
        uint64_t wrongs[2] = {uint64_t(combine(ctx, double(wrong), false)), 0};
        if (gRank == 0) peer::printRow(o, s, times, wrongs);
        anyWrong |= wrongs[0] > 0;
    }
    if (gRank == 0) std::printf("# Out of bounds values : %s\n", anyWrong ? "FAILED" : "0 OK");
    return anyWrong ? 1 : 0;
}
