// hostccl's C++ API: communicators with RAII and asynchronous collectives that
// return Work handles, for code that embeds collectives in a training loop.
// SPDX-License-Identifier: Apache-2.0
//
// C++20 (std::span). Built on the same core as the HCCL C API: a Communicator owns an HcclComm and a
// private stream (a CPU work queue); every collective is queued on that stream and
// returns at once. Ops run in the order they were called, so every rank must call
// the same collectives in the same order (from one thread, or with its own
// ordering across threads). Buffers must stay alive until the op's Work completes.
//
//   hostccl::Communicator comm = hostccl::Communicator::fromEnvironment();  // mpirun/srun/torchrun
//   std::vector<float> grad(n);
//   hostccl::Work w = comm.allReduce(std::span<float>(grad));               // in place, sum
//   ...compute...
//   w.wait();                                                               // throws hostccl::Error on failure
//
// Errors: constructors and calls with bad arguments throw hostccl::Error carrying
// the precise HcclResult; an op that fails while running reports through its Work.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include <hccl/hccl.h>
#include <hostccl/hostccl.h>

namespace hostccl {
// Versioned: the public types are distinct symbols from the library's internals.
inline namespace v1 {

// An HCCL error with its code; what() names the call and the code.
class Error : public std::runtime_error {
public:
    Error(HcclResult code, const std::string& what);
    HcclResult code() const noexcept { return code_; }

private:
    HcclResult code_;
};

// Throws Error when `rc` is not HCCL_SUCCESS.
void check(HcclResult rc, const char* call);

// The HCCL datatype of a C++ element type (float, double, int8_t ... uint64_t).
template <typename T>
constexpr HcclDataType dataTypeOf() {
    using U = std::remove_cv_t<T>;
    if constexpr (std::is_same_v<U, float>) return HCCL_DATA_TYPE_FP32;
    else if constexpr (std::is_same_v<U, double>) return HCCL_DATA_TYPE_FP64;
    else if constexpr (std::is_same_v<U, int8_t>) return HCCL_DATA_TYPE_INT8;
    else if constexpr (std::is_same_v<U, uint8_t>) return HCCL_DATA_TYPE_UINT8;
    else if constexpr (std::is_same_v<U, int16_t>) return HCCL_DATA_TYPE_INT16;
    else if constexpr (std::is_same_v<U, uint16_t>) return HCCL_DATA_TYPE_UINT16;
    else if constexpr (std::is_same_v<U, int32_t>) return HCCL_DATA_TYPE_INT32;
    else if constexpr (std::is_same_v<U, uint32_t>) return HCCL_DATA_TYPE_UINT32;
    else if constexpr (std::is_same_v<U, int64_t>) return HCCL_DATA_TYPE_INT64;
    else if constexpr (std::is_same_v<U, uint64_t>) return HCCL_DATA_TYPE_UINT64;
    else static_assert(sizeof(T) == 0, "no HCCL datatype for this element type");
}

struct WorkState;

// The completion of one queued op. Copies share the same op. A default-constructed
// Work is already complete.
class Work {
public:
    Work() = default;
    explicit Work(std::shared_ptr<WorkState> state) : state_(std::move(state)) {}

    // True once the op has finished (successfully or not); never blocks.
    bool test() const;
    // False for a Work that stands for no op (default-constructed: nothing was queued).
    bool queued() const { return state_ != nullptr; }
    // Waits until the op finishes or `timeout` passes; false on timeout. Throws
    // Error with the op's code if it failed.
    bool wait(std::chrono::milliseconds timeout = std::chrono::milliseconds::max()) const;
    // HCCL_SUCCESS while running or when it succeeded; else the op's code.
    HcclResult error() const;
    // Milliseconds the op spent running on the stream (0 until it finished).
    double runMs() const;

private:
    std::shared_ptr<WorkState> state_;
};

// Waits for every Work in `works` (all of them, even after a failure); then throws
// the first failure's Error.
void waitAll(std::span<const Work> works);

struct CommOptions {
    int32_t device = -1;         // aclrtSetDevice(device) first when >= 0 (one device per rank)
    uint32_t bufferSizeMiB = 0;  // HCCL_BUFFSIZE for this communicator; 0 = default
    int32_t execTimeoutSeconds = -1;  // HCCL_EXEC_TIMEOUT for this communicator; -1 = default
    std::string name;            // communicator name (logs, traces); empty = generated
};

class Communicator {
public:
    // A new root info (call on one rank, then hand its bytes to the others).
    static HcclRootInfo createRootInfo();
    // Joins the communicator of `nranks` ranks described by `root`.
    Communicator(const HcclRootInfo& root, uint32_t nranks, uint32_t rank, const CommOptions& options = {});
    // From an HCCL rank table (JSON file) as this table's rank `rank`.
    static Communicator fromRankTable(const std::string& path, uint32_t rank, const CommOptions& options = {});
    // From the launcher's environment (mpirun, srun, torchrun; see HostcclCommInitFromEnv).
    static Communicator fromEnvironment(const CommOptions& options = {});
    // Takes ownership of a communicator made through the C API.
    explicit Communicator(HcclComm adopted);

    Communicator(Communicator&&) noexcept;
    Communicator& operator=(Communicator&&) noexcept;
    Communicator(const Communicator&) = delete;
    Communicator& operator=(const Communicator&) = delete;
    // Waits for the queued ops, then destroys the communicator.
    ~Communicator();

    uint32_t rank() const;
    uint32_t size() const;
    HcclComm handle() const;      // for the C API; still owned here
    aclrtStream stream() const;   // the private stream the ops run on (for aclrt events)
    std::string name() const;
    std::string describe() const; // hosts, links and algorithms (HostcclCommDescribe)
    uint32_t hostOf(uint32_t rank) const;  // equal for ranks on one machine (HostcclCommGetRankHost)

    // Collectives: raw buffers, as in the C API.
    Work allReduce(const void* send, void* recv, uint64_t count, HcclDataType dtype, HcclReduceOp op = HCCL_REDUCE_SUM);
    Work allGather(const void* send, void* recv, uint64_t sendCount, HcclDataType dtype);
    Work reduceScatter(const void* send, void* recv, uint64_t recvCount, HcclDataType dtype,
                       HcclReduceOp op = HCCL_REDUCE_SUM);
    Work broadcast(void* buf, uint64_t count, HcclDataType dtype, uint32_t root);
    Work reduce(const void* send, void* recv, uint64_t count, HcclDataType dtype, HcclReduceOp op, uint32_t root);
    Work allToAll(const void* send, void* recv, uint64_t countPerRank, HcclDataType dtype);
    Work send(const void* buf, uint64_t count, HcclDataType dtype, uint32_t peer);
    Work recv(void* buf, uint64_t count, HcclDataType dtype, uint32_t peer);
    // From whichever rank sends next (HostcclRecvAny): `*source` holds its rank once
    // the Work has completed, and must live until then.
    Work recvAny(void* buf, uint64_t count, HcclDataType dtype, uint32_t* source);
    Work barrier();
    // Any other call of the C API, queued like the collectives above and completing a
    // Work: `launch(comm, stream)` makes the call (HcclAlltoAllV with its counts,
    // HcclScatter, HcclBatchSendRecv, ...); `call` names it in errors. The buffers and
    // arrays it reads must stay alive until the Work completes.
    Work launch(const char* call, const std::function<HcclResult(HcclComm, aclrtStream)>& launch);

    // Typed forms: the element type gives the datatype; spans give the counts.
    template <typename T>
    Work allReduce(std::span<T> data, HcclReduceOp op = HCCL_REDUCE_SUM) {
        return allReduce(data.data(), data.data(), data.size(), dataTypeOf<T>(), op);
    }
    template <typename T>
    Work allReduce(std::span<const T> send, std::span<T> recv, HcclReduceOp op = HCCL_REDUCE_SUM) {
        requireSize(recv.size() == send.size(), "allReduce: recv and send sizes differ");
        return allReduce(send.data(), recv.data(), send.size(), dataTypeOf<T>(), op);
    }
    template <typename T>  // recv holds size() blocks of send.size() elements, in rank order
    Work allGather(std::span<const T> send, std::span<T> recv) {
        requireSize(recv.size() == send.size() * size(), "allGather: recv must hold size() * send.size() elements");
        return allGather(send.data(), recv.data(), send.size(), dataTypeOf<T>());
    }
    template <typename T>  // send holds size() blocks of recv.size() elements
    Work reduceScatter(std::span<const T> send, std::span<T> recv, HcclReduceOp op = HCCL_REDUCE_SUM) {
        requireSize(send.size() == recv.size() * size(), "reduceScatter: send must hold size() * recv.size() elements");
        return reduceScatter(send.data(), recv.data(), recv.size(), dataTypeOf<T>(), op);
    }
    template <typename T>
    Work broadcast(std::span<T> data, uint32_t root) {
        return broadcast(data.data(), data.size(), dataTypeOf<T>(), root);
    }
    template <typename T>
    Work send(std::span<const T> data, uint32_t peer) {
        return send(data.data(), data.size(), dataTypeOf<T>(), peer);
    }
    template <typename T>
    Work recv(std::span<T> data, uint32_t peer) {
        return recv(data.data(), data.size(), dataTypeOf<T>(), peer);
    }

    // Waits for every op queued so far; throws the first failure among them.
    void synchronize();

    // A sub-communicator of the listed ranks of this communicator, this rank among
    // them, in the order of their ranks in it (HostcclCommSplit). Every member calls
    // it with the same ranks and the same `groupId`, which must differ between the
    // groups built from one communicator.
    Communicator split(const std::vector<uint32_t>& ranks, uint64_t groupId, const CommOptions& options = {});
    // The exec timeout of the ops that start from now on (0 = no limit).
    void setExecTimeout(int32_t seconds);
    // The survivors' communicator without `excluded` (HostcclCommShrink).
    Communicator shrink(const std::vector<uint32_t>& excluded, const CommOptions& options = {});
    // Fails every queued op and destroys the communicator now (any thread).
    void abort();

    struct Failure {
        HcclResult code = HCCL_SUCCESS;
        int32_t rank = -1;  // the rank blamed, -1 when none
        std::string reason;
    };
    Failure failure() const;

    struct Impl;

private:
    explicit Communicator(std::unique_ptr<Impl> impl);
    static void requireSize(bool ok, const char* what);

    std::unique_ptr<Impl> impl_;
};

}  // namespace v1
}  // namespace hostccl
