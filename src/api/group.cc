#include "api/group.h"

#include <vector>

#include "api/op_queue.h"
#include "api/validate.h"
#include "common/fast_tls.h"

namespace hostccl::api::group {

namespace {
struct Deferred {
    Comm* comm;
    std::shared_ptr<runtime::Stream> stream;
    CollArgs args;
};
struct GroupState {
    int depth = 0;
    std::vector<Deferred> ops;
};
HOSTCCL_FAST_TLS thread_local GroupState tGroup;

bool pointToPoint(CollType t) { return t == CollType::Send || t == CollType::Recv || t == CollType::BatchSendRecv; }

// A send, receive or batch as batch items.
void appendItems(const CollArgs& a, std::vector<HcclSendRecvItem>* items) {
    if (a.type == CollType::BatchSendRecv) {
        items->insert(items->end(), a.items.begin(), a.items.end());
        return;
    }
    const bool send = a.type == CollType::Send;
    items->push_back(HcclSendRecvItem{send ? HCCL_SEND : HCCL_RECV, send ? const_cast<void*>(a.sendBuf) : a.recvBuf,
                                      a.count, a.dtype, a.peer});
}

HcclResult launch(Deferred& d) {
    if (!commAlive(d.comm)) return fail(HCCL_E_PARA, "HcclGroupEnd: a communicator used in the group was destroyed");
    return enqueue(d.comm, *d.stream, std::move(d.args));
}

// Merges each (communicator, stream)'s sends and receives into one batch placed
// where the first of them was issued. All of them, even across collectives issued
// between them: a collective between a send and its matching receive would
// otherwise wait for a send that waits for that receive. As in NCCL, the operators
// of one group carry no order between point-to-point and collectives.
std::vector<Deferred> merged(std::vector<Deferred> ops) {
    std::vector<Deferred> out;
    auto batchFor = [&](const Deferred& d) -> Deferred* {
        for (Deferred& o : out)
            if (o.args.type == CollType::BatchSendRecv && o.comm == d.comm && o.stream == d.stream) return &o;
        return nullptr;
    };
    for (Deferred& d : ops) {
        if (!pointToPoint(d.args.type)) {
            out.push_back(std::move(d));
            continue;
        }
        Deferred* batch = batchFor(d);
        if (batch == nullptr) {
            CollArgs b;
            b.type = CollType::BatchSendRecv;
            out.push_back(Deferred{d.comm, d.stream, std::move(b)});
            batch = &out.back();
        }
        appendItems(d.args, &batch->args.items);
    }
    return out;
}
}  // namespace

bool open() { return tGroup.depth > 0; }

void defer(Comm* c, std::shared_ptr<runtime::Stream> s, CollArgs args) {
    tGroup.ops.push_back(Deferred{c, std::move(s), std::move(args)});
}

HcclResult start() {
    ++tGroup.depth;
    return HCCL_SUCCESS;
}

HcclResult end() {
    if (tGroup.depth == 0) return fail(HCCL_E_PARA, "HcclGroupEnd: no group is open on this thread (HcclGroupStart first)");
    if (--tGroup.depth > 0) return HCCL_SUCCESS;
    std::vector<Deferred> ops = merged(std::move(tGroup.ops));
    tGroup.ops.clear();
    HcclResult first = HCCL_SUCCESS;
    for (Deferred& d : ops) {
        HcclResult rc = launch(d);
        if (first == HCCL_SUCCESS) first = rc;
    }
    return first;
}

}  // namespace hostccl::api::group
