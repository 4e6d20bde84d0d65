// One RDMA device opened for the whole process: its context, protection domain and
// the port and GID the ranks use. Opened on first use; every RdmaLink shares it.
#pragma once

#include <infiniband/verbs.h>

#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "transports/rdma/gid_select.h"
#include "transports/rdma/registration_cache.h"

namespace hostccl::transport::rdma {

// ibv_reg_mr on a device's protection domain, for the registration cache.
class VerbsRegistrar : public Registrar {
public:
    explicit VerbsRegistrar(ibv_pd* pd) : pd_(pd) {}
    void* registerMemory(void* addr, size_t len, uint32_t* lkey, uint32_t* rkey, std::string* why) override;
    void deregister(void* handle) override;

private:
    ibv_pd* pd_;
};

class VerbsDevice {
public:
    // The device named by HOSTCCL_RDMA_DEVICE, else the first with an active port;
    // the GID mapped from `localIp` (see gid_select.h). Null with `why` when there is
    // none usable; the answer is kept, so the reason is worked out once.
    static std::shared_ptr<VerbsDevice> get(const std::string& localIp, std::string* why);
    ~VerbsDevice();

    ibv_context* context() const { return ctx_; }
    ibv_pd* pd() const { return pd_; }
    uint8_t port() const { return port_; }
    int gidIndex() const { return gidIndex_; }
    const Gid& gid() const { return gid_; }
    uint16_t lid() const { return lid_; }
    ibv_mtu activeMtu() const { return mtu_; }
    const std::string& name() const { return name_; }
    const std::string& gidWhy() const { return gidWhy_; }

    // Asynchronous events (a queue pair gone fatal, the port down) arrive on the
    // device, not on a queue: one thread per device reads them, acknowledges them at
    // once (destroying a queue pair waits for that) and tells the link they concern.
    using EventSink = std::function<void(const std::string& what)>;
    void watchQp(uint32_t qpn, EventSink sink);
    void unwatchQp(uint32_t qpn);

    // Zero-copy sends: the local key of the registration covering [addr, addr + len),
    // made on first use and kept (the cache, shared by every link, is emptied of a
    // buffer when aclrtFree releases it), pinned until unpin(). False with `why`.
    bool pinRegistration(const void* addr, size_t len, uint32_t* lkey, RegistrationPin* pin, std::string* why);
    void unpin(const RegistrationPin& pin);
    void forget(const void* addr, size_t len);  // the memory is being freed
    uint64_t registrationMisses();              // registrations made (hits are free)

private:
    VerbsDevice() = default;
    void readEvents();

    std::string name_;
    ibv_context* ctx_ = nullptr;
    ibv_pd* pd_ = nullptr;
    uint8_t port_ = 1;
    int gidIndex_ = -1;
    Gid gid_{};
    uint16_t lid_ = 0;
    ibv_mtu mtu_ = IBV_MTU_1024;
    std::string gidWhy_;
    std::mutex sinksMutex_;
    std::map<uint32_t, EventSink> sinks_;  // by queue pair number
    std::mutex cacheMutex_;  // links of every communicator, and aclrtFree from any thread
    std::unique_ptr<VerbsRegistrar> registrar_;
    std::unique_ptr<RegistrationCache> cache_;
};

}  // namespace hostccl::transport::rdma
