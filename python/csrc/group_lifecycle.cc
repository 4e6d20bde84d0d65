// A hostccl group's life: joined through torch's store, split from a parent without
// a new rendezvous, its timeout changed, aborted, shut down and destroyed.
#include <c10/util/Exception.h>
#include <pybind11/pybind11.h>

#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <cstring>
#include <limits>

#include "completer.h"
#include "process_group.h"
#include "work.h"

namespace hostccl::torch_backend {

int32_t execTimeoutSeconds(std::chrono::milliseconds timeout) {
    const double s = std::ceil(std::chrono::duration<double>(timeout).count());
    return static_cast<int32_t>(std::clamp(s, 1.0, double(std::numeric_limits<int32_t>::max())));
}

namespace {

std::unique_ptr<hostccl::Communicator> joinThroughStore(const c10::intrusive_ptr<c10d::Store>& store, int rank,
                                                        int size, std::chrono::milliseconds timeout) {
    TORCH_CHECK(size >= 1 && rank >= 0 && rank < size, "hostccl: rank ", rank, " of ", size, " is not a valid rank");
    // torchrun restarts its workers with the store of the attempt before still holding
    // that attempt's root info: a late reader would join a communicator that is gone.
    const char* attempt = std::getenv("TORCHELASTIC_RESTART_COUNT");
    const std::string key = std::string("hostccl/root_info") + (attempt ? std::string("/attempt_") + attempt : "");
    HcclRootInfo root{};
    if (rank == 0) {
        root = hostccl::Communicator::createRootInfo();
        const auto* bytes = reinterpret_cast<const uint8_t*>(&root);
        store->set(key, std::vector<uint8_t>(bytes, bytes + sizeof root));
    } else {
        std::vector<uint8_t> bytes = store->get(key);  // waits for rank 0, within the store's timeout
        TORCH_CHECK(bytes.size() == sizeof root, "hostccl: the store's root info has ", bytes.size(),
                    " bytes, not ", sizeof root, " (another backend's key?)");
        std::memcpy(&root, bytes.data(), sizeof root);
    }
    hostccl::CommOptions options;
    options.execTimeoutSeconds = execTimeoutSeconds(timeout);
    return std::make_unique<hostccl::Communicator>(root, uint32_t(size), uint32_t(rank), options);
}

std::unique_ptr<hostccl::Communicator> splitOf(hostccl::Communicator& parent, const std::vector<int64_t>& ranks,
                                               uint64_t groupId, std::chrono::milliseconds timeout) {
    std::vector<uint32_t> members;
    for (int64_t r : ranks) {
        TORCH_CHECK(r >= 0 && r < int64_t(parent.size()), "hostccl: subgroup rank ", r, " is not a rank of the parent");
        members.push_back(uint32_t(r));
    }
    std::vector<uint32_t> sorted = members;
    std::sort(sorted.begin(), sorted.end());
    TORCH_CHECK(std::adjacent_find(sorted.begin(), sorted.end()) == sorted.end(),
                "hostccl: a subgroup lists a rank twice");
    hostccl::CommOptions options;
    options.execTimeoutSeconds = execTimeoutSeconds(timeout);
    return std::make_unique<hostccl::Communicator>(parent.split(members, groupId, options));
}

int indexOf(const std::vector<int64_t>& ranks, uint32_t rank) {
    auto it = std::find(ranks.begin(), ranks.end(), int64_t(rank));
    TORCH_CHECK(it != ranks.end(), "hostccl: this rank (", rank, ") is not a member of the subgroup");
    return int(it - ranks.begin());
}

}  // namespace

ProcessGroupHostccl::ProcessGroupHostccl(int rank, int size, std::unique_ptr<hostccl::Communicator> comm,
                                         c10::intrusive_ptr<c10d::Store> store, std::chrono::milliseconds timeout)
    : BackendBase(rank, size),
      store_(std::move(store)),
      timeout_(timeout),
      comm_(std::move(comm)),
      completer_(std::make_shared<Completer>()) {
    init();
}

ProcessGroupHostccl::ProcessGroupHostccl(const c10::intrusive_ptr<c10d::Store>& store, int rank, int size,
                                         std::chrono::milliseconds timeout)
    : ProcessGroupHostccl(rank, size, joinThroughStore(store, rank, size, timeout), store, timeout) {}

ProcessGroupHostccl::ProcessGroupHostccl(ProcessGroupHostccl& parent, const std::vector<int64_t>& ranks,
                                         uint64_t groupId, std::chrono::milliseconds timeout,
                                         const c10::intrusive_ptr<c10d::Store>& store)
    : ProcessGroupHostccl(indexOf(ranks, parent.live().rank()), int(ranks.size()),
                          splitOf(parent.live(), ranks, groupId, timeout), store, timeout) {}

ProcessGroupHostccl::~ProcessGroupHostccl() { release(); }

void ProcessGroupHostccl::release() {
    // Completes what is still queued while the communicator lives, then destroys it.
    // The completer's threads may need the GIL to drop tensors that Python objects
    // hold (and destroying waits for them): a caller holding it lets go meanwhile.
    if (Py_IsInitialized() && PyGILState_Check()) {
        pybind11::gil_scoped_release unlocked;
        Completer::release(std::move(completer_), std::move(comm_));
    } else {
        Completer::release(std::move(completer_), std::move(comm_));
    }
}

hostccl::Communicator& ProcessGroupHostccl::live() const {
    TORCH_CHECK(comm_ != nullptr, "hostccl: the process group was ", closedBy_, ": no op can be issued on it any more");
    return *comm_;
}

#if HOSTCCL_TORCH_BACKEND_SPLIT

namespace {
// 64-bit FNV-1a: the same on every rank (std::hash need not be).
uint64_t fnv1a(const std::string& text) {
    uint64_t h = 14695981039346656037ULL;
    for (unsigned char c : text) h = (h ^ c) * 1099511628211ULL;
    return h;
}
}  // namespace

c10::intrusive_ptr<c10d::Backend> ProcessGroupHostccl::split(const c10::intrusive_ptr<c10d::Store>& store,
                                                             const std::vector<int>& ranks,
                                                             const c10::intrusive_ptr<Options>& opts) {
    if (std::find(ranks.begin(), ranks.end(), rank_) == ranks.end()) return nullptr;  // not a member
    std::vector<int64_t> members(ranks.begin(), ranks.end());
    // torch names each split group alike on its members (a hash of its ranks and
    // how many splits came before); without a name the ranks and this group's count
    // of splits with them stand in.
    std::string name = opts ? opts->group_name : "";
    if (name.empty()) {
        std::string key;
        for (int r : ranks) key += std::to_string(r) + ",";
        name = key + "#" + std::to_string(unnamedSplits_[key]++);
    }
    const std::chrono::milliseconds timeout = opts && opts->timeout.count() > 0 ? opts->timeout : timeout_;
    return c10::make_intrusive<ProcessGroupHostccl>(*this, members, fnv1a(name), timeout, store);
}

c10::intrusive_ptr<c10d::Backend::Options> ProcessGroupHostccl::getBackendOptions() {
    return c10::make_intrusive<Options>("hostccl", timeout_);
}

void ProcessGroupHostccl::setTimeout(std::chrono::milliseconds timeout) {
    live().setExecTimeout(execTimeoutSeconds(timeout));
    timeout_ = timeout;
}

#endif

#if HOSTCCL_TORCH2

void ProcessGroupHostccl::abort() {
    if (comm_ == nullptr) return;
    comm_->abort();  // the op in flight and the queued ones fail at once; peers are told
    closedBy_ = "aborted";
    release();
}

void ProcessGroupHostccl::shutdown() {
    if (comm_ == nullptr) return;
    closedBy_ = "shut down";
    release();
}

#endif

}  // namespace hostccl::torch_backend
