#include "algorithms/p2p/send_recv.h"

#include "algorithms/p2p/any_source.h"

namespace hostccl {

HcclResult PointToPoint::run(Context& ctx) const {
    const CollArgs& a = ctx.args();
    switch (a.type) {
        case CollType::Send:
            ctx.sendP2p(a.peer, a.sendBuf, a.count, a.dtype);
            break;
        case CollType::Recv:
            if (a.anySource != nullptr) return receiveFromAnySource(ctx);
            ctx.recvP2p(a.peer, a.recvBuf, a.count, a.dtype);
            break;
        default:
            for (const HcclSendRecvItem& it : a.items) {
                if (it.sendRecvType == HCCL_SEND)
                    ctx.sendP2p(it.remoteRank, it.buf, it.count, it.dataType);
                else
                    ctx.recvP2p(it.remoteRank, it.buf, it.count, it.dataType);
            }
    }
    return ctx.waitAll();
}

}  // namespace hostccl
