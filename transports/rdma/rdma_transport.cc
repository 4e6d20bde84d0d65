#include "transports/rdma/rdma_transport.h"

#include <mutex>

#include "common/env.h"
#include "common/log.h"
#ifdef HOSTCCL_HAVE_RDMA
#include "transports/rdma/verbs/rdma_link.h"
#endif

namespace hostccl::transport {

namespace {

bool wantRdma(const PairEnds& ends) { return !ends.sameHost || env::getInt("HCCL_INTRA_ROCE_ENABLE", 0, 1) == 1; }

#ifdef HOSTCCL_HAVE_RDMA
// This process's RDMA device, or null; why there is none is logged once.
std::shared_ptr<rdma::VerbsDevice> rdmaDevice(const PairEnds& ends, std::string* why) {
    auto dev = rdma::VerbsDevice::get(ends.selfIp, why);
    static std::once_flag logged;
    if (dev == nullptr) std::call_once(logged, [&] { log::info("RDMA not used, TCP instead: {}", *why); });
    return dev;
}

// Connects the queue pairs over the pair's socket (rdma_link.h); both ends learn
// the outcome in the closing exchange, so a failure leaves both on the socket.
class PendingRdmaLink final : public PendingLink {
public:
    PendingRdmaLink(const PairEnds& ends, std::shared_ptr<rdma::VerbsDevice> device)
        : ends_(ends), device_(std::move(device)) {}
    std::unique_ptr<Link> connect(net::Fd& fd, Deadline deadline, std::string* why) override {
        return rdma::RdmaLink::connect(ends_.peerRank, ends_.commId, ends_.commSize, device_, fd, deadline, why);
    }

private:
    PairEnds ends_;
    std::shared_ptr<rdma::VerbsDevice> device_;
};

std::unique_ptr<PendingLink> offerRdma(const PairEnds& ends, std::string* why) {
    auto dev = rdmaDevice(ends, why);
    if (dev == nullptr) return nullptr;
    return std::make_unique<PendingRdmaLink>(ends, std::move(dev));
}
#else
std::unique_ptr<PendingLink> offerRdma(const PairEnds&, std::string* why) {
    *why = "hostccl was built without libibverbs";
    return nullptr;
}
#endif

std::unique_ptr<PendingLink> acceptRdma(const PairEnds& ends, const std::string&, std::string* why) {
    return offerRdma(ends, why);  // the answering end needs what the offering end needs: a device
}

}  // namespace

const TransportEntry& rdmaTransport() {
    static const TransportEntry entry{"rdma", 'R', LinkClass::Rdma, HCCL_E_ROCE_CONNECT, wantRdma, offerRdma, acceptRdma};
    return entry;
}

}  // namespace hostccl::transport
