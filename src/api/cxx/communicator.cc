// The C++ Communicator: an HcclComm plus a private stream. Each collective queues
// three tasks under one lock, a start marker, the op (through the C entry point,
// so validation and behaviour are the C API's) and an end marker that reads the
// op's result from the stream and completes the Work.
#include <algorithm>
#include <cstring>
#include <mutex>

#include "api/cxx/work_state.h"
#include "runtime/stream.h"

namespace hostccl {
inline namespace v1 {

struct Communicator::Impl {
    HcclComm comm = nullptr;
    aclrtStream stream = nullptr;
    std::shared_ptr<runtime::Stream> queue;
    std::mutex order;  // keeps an op and its markers together when threads share the communicator

    explicit Impl(HcclComm c) : comm(c) {
        if (aclrtCreateStream(&stream) != ACL_SUCCESS) {
            HcclCommDestroy(c);
            throw Error(HCCL_E_INTERNAL, "aclrtCreateStream");
        }
        queue = runtime::resolveStream(stream);
    }
    ~Impl() {
        if (stream != nullptr) {
            aclrtSynchronizeStream(stream);  // results of failed ops went to their Work handles
            aclrtDestroyStream(stream);
        }
        if (comm != nullptr) HcclCommDestroy(comm);
    }

    template <typename Launch>
    Work run(const char* call, Launch&& launch) {
        auto state = std::make_shared<WorkState>(call);
        std::lock_guard<std::mutex> lock(order);
        if (comm == nullptr) throw Error(HCCL_E_PARA, std::string(call) + ": communicator was aborted");
        queue->enqueue([state] {
            state->started();
            return 0;
        });
        HcclResult rc = launch(comm, stream);
        runtime::Stream* q = queue.get();
        // Queued even when the launch was refused: the start marker is then followed
        // directly by this one, which must not take the marker's 0 for a result.
        state->stream = queue;
        state->ticket = queue->enqueue([state, q, rc] {
            state->finish(rc != HCCL_SUCCESS ? rc : static_cast<HcclResult>(q->lastResult()));
            return 0;
        });
        if (rc != HCCL_SUCCESS) throw Error(rc, call);  // bad arguments: nothing was queued
        return Work(std::move(state));
    }
};

namespace {

HcclCommConfig configOf(const CommOptions& options) {
    HcclCommConfig config;
    HcclCommConfigInit(&config);
    if (options.bufferSizeMiB > 0) config.hcclBufferSize = options.bufferSizeMiB;
    if (options.execTimeoutSeconds >= 0) config.hcclExecTimeOut = options.execTimeoutSeconds;
    if (!options.name.empty()) {
        if (options.name.size() >= sizeof config.hcclCommName)
            throw Error(HCCL_E_PARA, "CommOptions: name longer than " + std::to_string(sizeof config.hcclCommName - 1));
        std::memcpy(config.hcclCommName, options.name.c_str(), options.name.size() + 1);
    }
    return config;
}

void selectDevice(const CommOptions& options) {
    if (options.device >= 0 && aclrtSetDevice(options.device) != ACL_SUCCESS)
        throw Error(HCCL_E_PARA, "aclrtSetDevice(" + std::to_string(options.device) + ")");
}

}  // namespace

HcclRootInfo Communicator::createRootInfo() {
    HcclRootInfo root;
    check(HcclGetRootInfo(&root), "HcclGetRootInfo");
    return root;
}

Communicator::Communicator(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Communicator::Communicator(HcclComm adopted) {
    if (adopted == nullptr) throw Error(HCCL_E_PTR, "Communicator: adopted comm is NULL");
    impl_ = std::make_unique<Impl>(adopted);
}

Communicator::Communicator(const HcclRootInfo& root, uint32_t nranks, uint32_t rank, const CommOptions& options) {
    selectDevice(options);
    HcclCommConfig config = configOf(options);
    HcclComm comm = nullptr;
    check(HcclCommInitRootInfoConfig(nranks, &root, rank, &config, &comm), "HcclCommInitRootInfoConfig");
    impl_ = std::make_unique<Impl>(comm);
}

Communicator Communicator::fromRankTable(const std::string& path, uint32_t rank, const CommOptions& options) {
    selectDevice(options);
    HcclCommConfig config = configOf(options);
    HcclComm comm = nullptr;
    check(HcclCommInitClusterInfoConfig(path.c_str(), rank, &config, &comm), "HcclCommInitClusterInfoConfig");
    return Communicator(std::make_unique<Impl>(comm));
}

Communicator Communicator::fromEnvironment(const CommOptions& options) {
    selectDevice(options);
    HcclComm comm = nullptr;
    check(HostcclCommInitFromEnv(&comm), "HostcclCommInitFromEnv");
    return Communicator(std::make_unique<Impl>(comm));
}

Communicator::Communicator(Communicator&&) noexcept = default;
Communicator& Communicator::operator=(Communicator&&) noexcept = default;
Communicator::~Communicator() = default;

void Communicator::requireSize(bool ok, const char* what) {
    if (!ok) throw Error(HCCL_E_PARA, what);
}

uint32_t Communicator::rank() const {
    uint32_t r = 0;
    check(HcclGetRankId(impl_->comm, &r), "HcclGetRankId");
    return r;
}

uint32_t Communicator::size() const {
    uint32_t n = 0;
    check(HcclGetRankSize(impl_->comm, &n), "HcclGetRankSize");
    return n;
}

HcclComm Communicator::handle() const { return impl_->comm; }
aclrtStream Communicator::stream() const { return impl_->stream; }

std::string Communicator::name() const {
    char text[256] = {};
    check(HcclGetCommName(impl_->comm, text), "HcclGetCommName");
    return text;
}

std::string Communicator::describe() const {
    std::string text(1 << 16, '\0');
    check(HostcclCommDescribe(impl_->comm, text.data(), text.size()), "HostcclCommDescribe");
    text.resize(std::strlen(text.c_str()));
    return text;
}

uint32_t Communicator::hostOf(uint32_t r) const {
    uint32_t host = 0;
    check(HostcclCommGetRankHost(impl_->comm, r, &host), "HostcclCommGetRankHost");
    return host;
}

// The C API takes non-const buffers where it only reads them.
static void* mut(const void* p) { return const_cast<void*>(p); }

Work Communicator::allReduce(const void* send, void* recv, uint64_t count, HcclDataType dtype, HcclReduceOp op) {
    return impl_->run("HcclAllReduce",
                      [&](HcclComm c, aclrtStream s) { return HcclAllReduce(mut(send), recv, count, dtype, op, c, s); });
}

Work Communicator::allGather(const void* send, void* recv, uint64_t sendCount, HcclDataType dtype) {
    return impl_->run("HcclAllGather",
                      [&](HcclComm c, aclrtStream s) { return HcclAllGather(mut(send), recv, sendCount, dtype, c, s); });
}

Work Communicator::reduceScatter(const void* send, void* recv, uint64_t recvCount, HcclDataType dtype, HcclReduceOp op) {
    return impl_->run("HcclReduceScatter", [&](HcclComm c, aclrtStream s) {
        return HcclReduceScatter(mut(send), recv, recvCount, dtype, op, c, s);
    });
}

Work Communicator::broadcast(void* buf, uint64_t count, HcclDataType dtype, uint32_t root) {
    return impl_->run("HcclBroadcast",
                      [&](HcclComm c, aclrtStream s) { return HcclBroadcast(buf, count, dtype, root, c, s); });
}

Work Communicator::reduce(const void* send, void* recv, uint64_t count, HcclDataType dtype, HcclReduceOp op,
                          uint32_t root) {
    return impl_->run("HcclReduce", [&](HcclComm c, aclrtStream s) {
        return HcclReduce(mut(send), recv, count, dtype, op, root, c, s);
    });
}

Work Communicator::allToAll(const void* send, void* recv, uint64_t countPerRank, HcclDataType dtype) {
    return impl_->run("HcclAlltoAll", [&](HcclComm c, aclrtStream s) {
        return HcclAlltoAll(send, countPerRank, dtype, recv, countPerRank, dtype, c, s);
    });
}

Work Communicator::send(const void* buf, uint64_t count, HcclDataType dtype, uint32_t peer) {
    return impl_->run("HcclSend",
                      [&](HcclComm c, aclrtStream s) { return HcclSend(mut(buf), count, dtype, peer, c, s); });
}

Work Communicator::recv(void* buf, uint64_t count, HcclDataType dtype, uint32_t peer) {
    return impl_->run("HcclRecv", [&](HcclComm c, aclrtStream s) { return HcclRecv(buf, count, dtype, peer, c, s); });
}

Work Communicator::recvAny(void* buf, uint64_t count, HcclDataType dtype, uint32_t* source) {
    return impl_->run("HostcclRecvAny",
                      [&](HcclComm c, aclrtStream s) { return HostcclRecvAny(buf, count, dtype, source, c, s); });
}

Work Communicator::barrier() {
    return impl_->run("HcclBarrier", [&](HcclComm c, aclrtStream s) { return HcclBarrier(c, s); });
}

Work Communicator::launch(const char* call, const std::function<HcclResult(HcclComm, aclrtStream)>& launch) {
    return impl_->run(call, launch);
}

void Communicator::synchronize() {
    int rc = aclrtSynchronizeStream(impl_->stream);
    if (rc != 0) throw Error(static_cast<HcclResult>(rc < 100000 ? rc : HCCL_E_RUNTIME), "synchronize");
}

Communicator Communicator::split(const std::vector<uint32_t>& ranks, uint64_t groupId, const CommOptions& options) {
    HcclCommConfig config = configOf(options);
    HcclComm sub = nullptr;
    check(HostcclCommSplit(impl_->comm, static_cast<uint32_t>(ranks.size()), ranks.data(), groupId, &config, &sub),
          "HostcclCommSplit");
    return Communicator(std::make_unique<Impl>(sub));
}

void Communicator::setExecTimeout(int32_t seconds) {
    check(HostcclCommSetExecTimeout(impl_->comm, seconds), "HostcclCommSetExecTimeout");
}

Communicator Communicator::shrink(const std::vector<uint32_t>& excluded, const CommOptions& options) {
    HcclCommConfig config = configOf(options);
    HcclComm sub = nullptr;
    check(HostcclCommShrink(impl_->comm, excluded.data(), static_cast<uint32_t>(excluded.size()), &config, &sub),
          "HostcclCommShrink");
    return Communicator(std::make_unique<Impl>(sub));
}

void Communicator::abort() {
    HcclComm comm = nullptr;
    {
        std::lock_guard<std::mutex> lock(impl_->order);
        std::swap(comm, impl_->comm);
    }
    if (comm != nullptr) check(HostcclCommAbort(comm), "HostcclCommAbort");
}

Communicator::Failure Communicator::failure() const {
    Failure f;
    if (impl_->comm == nullptr) {
        f.code = HCCL_E_INTERNAL;
        f.reason = "aborted by this process";
        return f;
    }
    char reason[1024] = {};
    check(HostcclCommGetFailure(impl_->comm, &f.code, &f.rank, reason, sizeof reason), "HostcclCommGetFailure");
    f.reason = reason;
    return f;
}

}  // namespace v1
}  // namespace hostccl
