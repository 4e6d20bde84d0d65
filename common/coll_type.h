// The operations a communicator runs, as they appear in logs and wire headers.
#pragma once

#include <cstdint>

namespace hostccl {

enum class CollType : uint8_t {
    AllReduce = 1,
    Broadcast,
    Reduce,
    AllGather,
    AllGatherV,
    ReduceScatter,
    ReduceScatterV,
    Scatter,
    AlltoAll,
    AlltoAllV,
    AlltoAllVC,
    Send,
    Recv,
    BatchSendRecv,
    Barrier,
};

inline const char* collName(CollType t) {
    switch (t) {
        case CollType::AllReduce: return "AllReduce";
        case CollType::Broadcast: return "Broadcast";
        case CollType::Reduce: return "Reduce";
        case CollType::AllGather: return "AllGather";
        case CollType::AllGatherV: return "AllGatherV";
        case CollType::ReduceScatter: return "ReduceScatter";
        case CollType::ReduceScatterV: return "ReduceScatterV";
        case CollType::Scatter: return "Scatter";
        case CollType::AlltoAll: return "AlltoAll";
        case CollType::AlltoAllV: return "AlltoAllV";
        case CollType::AlltoAllVC: return "AlltoAllVC";
        case CollType::Send: return "Send";
        case CollType::Recv: return "Recv";
        case CollType::BatchSendRecv: return "BatchSendRecv";
        case CollType::Barrier: return "Barrier";
    }
    return "Unknown";
}

// Point-to-point traffic is matched per pair, not by the communicator's collective
// sequence number.
inline bool isPointToPoint(CollType t) {
    return t == CollType::Send || t == CollType::Recv || t == CollType::BatchSendRecv;
}

inline bool isReduction(CollType t) {
    return t == CollType::AllReduce || t == CollType::Reduce || t == CollType::ReduceScatter ||
           t == CollType::ReduceScatterV;
}
inline bool hasRoot(CollType t) {
    return t == CollType::Broadcast || t == CollType::Reduce || t == CollType::Scatter;
}
inline bool isVariable(CollType t) {
    return t == CollType::AllGatherV || t == CollType::ReduceScatterV || t == CollType::AlltoAllV ||
           t == CollType::AlltoAllVC;
}

}  // namespace hostccl
