#include "transports/rdma/verbs/verbs_device.h"

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "common/env.h"
#include "common/log.h"
#include "common/thread_name.h"
#include "runtime/memory.h"

namespace hostccl::transport::rdma {
namespace {

// The first port of `ctx` that is active, or 0.
uint8_t activePort(ibv_context* ctx, ibv_port_attr* attr) {
    ibv_device_attr dev{};
    if (ibv_query_device(ctx, &dev) != 0) return 0;
    for (uint8_t p = 1; p <= dev.phys_port_cnt; ++p)
        if (ibv_query_port(ctx, p, attr) == 0 && attr->state == IBV_PORT_ACTIVE) return p;
    return 0;
}

// The process's device, for aclrtFree's notice (a plain function pointer).
std::atomic<VerbsDevice*> g_device{nullptr};
void forgetFreedMemory(const void* base, size_t size) {
    if (VerbsDevice* d = g_device.load(std::memory_order_acquire)) d->forget(base, size);
}

}  // namespace

std::shared_ptr<VerbsDevice> VerbsDevice::get(const std::string& localIp, std::string* why) {
    static std::mutex mutex;
    static std::shared_ptr<VerbsDevice> device;
    static std::string failure;
    static bool tried = false;
    std::lock_guard<std::mutex> lock(mutex);
    if (tried) {
        *why = failure;
        return device;
    }
    tried = true;
    int n = 0;
    ibv_device** list = ibv_get_device_list(&n);
    if (list == nullptr || n == 0) {
        failure = "no RDMA device (ibv_get_device_list found none)";
        if (list != nullptr) ibv_free_device_list(list);
        *why = failure;
        return nullptr;
    }
    const std::string wanted = env::getString("HOSTCCL_RDMA_DEVICE");
    std::string tried_names;
    for (int i = 0; i < n && device == nullptr; ++i) {
        const char* name = ibv_get_device_name(list[i]);
        tried_names += fmt::format("{}{}", tried_names.empty() ? "" : ", ", name);
        if (!wanted.empty() && wanted != name) continue;
        ibv_context* ctx = ibv_open_device(list[i]);
        if (ctx == nullptr) continue;
        ibv_port_attr attr{};
        uint8_t port = activePort(ctx, &attr);
        if (port == 0) {
            ibv_close_device(ctx);
            continue;
        }
        auto table = readGidTable(fmt::format("/sys/class/infiniband/{}/ports/{}", name, port));
        GidChoice choice = chooseGid(table, localIp, int(env::getInt("HOSTCCL_RDMA_GID_INDEX", -1, 1 << 20)));
        if (choice.index < 0) {
            failure = fmt::format("{} port {}: {}", name, port, choice.why);
            ibv_close_device(ctx);
            continue;
        }
        std::shared_ptr<VerbsDevice> d(new VerbsDevice);
        d->name_ = name;
        d->ctx_ = ctx;
        d->port_ = port;
        d->lid_ = attr.lid;
        d->mtu_ = attr.active_mtu;
        d->gidIndex_ = choice.index;
        d->gidWhy_ = choice.why;
        ibv_gid gid{};
        if (ibv_query_gid(ctx, port, choice.index, &gid) == 0) std::memcpy(d->gid_.data(), gid.raw, 16);
        d->pd_ = ibv_alloc_pd(ctx);
        if (d->pd_ == nullptr) {
            failure = fmt::format("{}: ibv_alloc_pd failed: {}", name, std::strerror(errno));
            continue;  // d closes the context
        }
        d->registrar_ = std::make_unique<VerbsRegistrar>(d->pd_);
        d->cache_ = std::make_unique<RegistrationCache>(*d->registrar_);
        log::info("RDMA: device {} port {}, {}", name, port, choice.why);
        device = d;
        // The device lives as long as the process: its event thread never stops, and
        // aclrtFree may tell it about freed memory at any time.
        new std::shared_ptr<VerbsDevice>(d);
        std::thread([raw = d.get()] { raw->readEvents(); }).detach();
        g_device.store(d.get(), std::memory_order_release);
        runtime::addReleaseObserver(&forgetFreedMemory);
    }
    ibv_free_device_list(list);
    if (device == nullptr && failure.empty())
        failure = wanted.empty() ? fmt::format("no RDMA device with an active port (found {})", tried_names)
                                 : fmt::format("HOSTCCL_RDMA_DEVICE={} is not an active device (found {})", wanted,
                                               tried_names);
    *why = failure;
    return device;
}

void VerbsDevice::watchQp(uint32_t qpn, EventSink sink) {
    std::lock_guard<std::mutex> lock(sinksMutex_);
    sinks_[qpn] = std::move(sink);
}

void VerbsDevice::unwatchQp(uint32_t qpn) {
    std::lock_guard<std::mutex> lock(sinksMutex_);
    sinks_.erase(qpn);
}

void VerbsDevice::readEvents() {
    nameThisThread("hccl-verbs");
    for (;;) {
        ibv_async_event e{};
        if (ibv_get_async_event(ctx_, &e) != 0) return;
        const ibv_event_type type = e.event_type;
        std::string what = ibv_event_type_str(type);
        const bool aboutQp = type == IBV_EVENT_QP_FATAL || type == IBV_EVENT_QP_REQ_ERR ||
                             type == IBV_EVENT_QP_ACCESS_ERR || type == IBV_EVENT_COMM_EST ||
                             type == IBV_EVENT_SQ_DRAINED || type == IBV_EVENT_PATH_MIG ||
                             type == IBV_EVENT_PATH_MIG_ERR || type == IBV_EVENT_QP_LAST_WQE_REACHED;
        const uint32_t qpn = aboutQp ? e.element.qp->qp_num : 0;
        ibv_ack_async_event(&e);
        if (type == IBV_EVENT_COMM_EST || type == IBV_EVENT_SQ_DRAINED) continue;  // not failures
        if (!aboutQp) {  // port or device events concern every link
            log::warn("RDMA: device {}: asynchronous event {}", name_, what);
            if (type != IBV_EVENT_PORT_ERR && type != IBV_EVENT_DEVICE_FATAL) continue;
            std::lock_guard<std::mutex> lock(sinksMutex_);
            for (auto& [n, sink] : sinks_) sink(fmt::format("device {}: {}", name_, what));
            continue;
        }
        std::lock_guard<std::mutex> lock(sinksMutex_);
        auto it = sinks_.find(qpn);
        if (it != sinks_.end()) it->second(fmt::format("queue pair {}: {}", qpn, what));
    }
}

bool VerbsDevice::pinRegistration(const void* addr, size_t len, uint32_t* lkey, RegistrationPin* pin,
                                  std::string* why) {
    std::lock_guard<std::mutex> lock(cacheMutex_);
    const Registration* r = cache_->acquirePinned(addr, len, pin, why);
    if (r != nullptr) *lkey = r->lkey;
    return r != nullptr;
}

void VerbsDevice::unpin(const RegistrationPin& pin) {
    std::lock_guard<std::mutex> lock(cacheMutex_);
    cache_->unpin(pin);
}

void VerbsDevice::forget(const void* addr, size_t len) {
    std::lock_guard<std::mutex> lock(cacheMutex_);
    cache_->invalidate(addr, len);
}

uint64_t VerbsDevice::registrationMisses() {
    std::lock_guard<std::mutex> lock(cacheMutex_);
    return cache_->misses();
}

VerbsDevice::~VerbsDevice() {
    cache_.reset();  // deregisters before the protection domain goes
    if (pd_ != nullptr) ibv_dealloc_pd(pd_);
    if (ctx_ != nullptr) ibv_close_device(ctx_);
}

// (ibv_reg_mr) in parentheses: the function, not verbs.h's macro of the same name, whose
// mix of two enum types clang rejects in C++20.
void* VerbsRegistrar::registerMemory(void* addr, size_t len, uint32_t* lkey, uint32_t* rkey, std::string* why) {
    ibv_mr* mr = (ibv_reg_mr)(pd_, addr, len, IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
    if (mr == nullptr) {
        *why = fmt::format("ibv_reg_mr of {} bytes failed: {} (is the locked-memory limit, ulimit -l, too low?)", len,
                           std::strerror(errno));
        return nullptr;
    }
    *lkey = mr->lkey;
    *rkey = mr->rkey;
    return mr;
}

void VerbsRegistrar::deregister(void* handle) { ibv_dereg_mr(static_cast<ibv_mr*>(handle)); }

}  // namespace hostccl::transport::rdma
