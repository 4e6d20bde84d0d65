// 3D parallelism: the data-, tensor- and pipeline-parallel sub-communicators of a
// world communicator, plus send/recv between neighbouring pipeline stages.
// SPDX-License-Identifier: Apache-2.0
//
// World ranks are laid out tensor-fastest (as Megatron-LM does): consecutive slots
// form a tensor-parallel group, then data-parallel replicas, then pipeline stages.
// Slots are filled host by host, so when every host runs a multiple of tp ranks each
// tensor-parallel group stays inside one host (its traffic on shared memory). Within
// a group, ranks (and pipeline stages) follow world-rank order.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "hostccl/hostccl.hpp"

namespace hostccl {
inline namespace v1 {

class ParallelGroups {
public:
    // Collective over `world`: every rank calls it with the same degrees, whose
    // product must be world.size(). Throws Error(HCCL_E_PARA) otherwise.
    ParallelGroups(Communicator& world, uint32_t dp, uint32_t tp, uint32_t pp);

    uint32_t dataParallelSize() const { return dp_; }
    uint32_t tensorParallelSize() const { return tp_; }
    uint32_t pipelineParallelSize() const { return pp_; }
    // This rank's coordinates.
    uint32_t dataParallelRank() const { return dpIndex_; }
    uint32_t tensorParallelRank() const { return tpIndex_; }
    uint32_t pipelineStage() const { return ppIndex_; }
    bool isFirstStage() const { return ppIndex_ == 0; }
    bool isLastStage() const { return ppIndex_ + 1 == pp_; }
    // True when every tensor-parallel group lies inside one host.
    bool tensorParallelWithinHost() const { return tpWithinHost_; }

    // Ranks are numbered as above: tensorParallel().rank() == tensorParallelRank(), etc.
    Communicator& dataParallel() { return *dpComm_; }
    Communicator& tensorParallel() { return *tpComm_; }
    Communicator& pipelineParallel() { return *ppComm_; }

    // The world ranks of this rank's groups, in group-rank order (ascending).
    const std::vector<uint32_t>& dataParallelMembers() const { return dpMembers_; }
    const std::vector<uint32_t>& tensorParallelMembers() const { return tpMembers_; }
    const std::vector<uint32_t>& pipelineMembers() const { return ppMembers_; }

    // Activations forward, gradients backward, between neighbouring stages. Throws
    // Error(HCCL_E_PARA) when there is no such stage.
    Work sendToNextStage(const void* buf, uint64_t count, HcclDataType dtype);
    Work recvFromPreviousStage(void* buf, uint64_t count, HcclDataType dtype);
    Work sendToPreviousStage(const void* buf, uint64_t count, HcclDataType dtype);
    Work recvFromNextStage(void* buf, uint64_t count, HcclDataType dtype);

private:
    uint32_t stageNeighbour(int step) const;

    uint32_t dp_, tp_, pp_;
    uint32_t dpIndex_ = 0, tpIndex_ = 0, ppIndex_ = 0;
    bool tpWithinHost_ = false;
    std::vector<uint32_t> dpMembers_, tpMembers_, ppMembers_;
    std::optional<Communicator> dpComm_, tpComm_, ppComm_;
};

}  // namespace v1
}  // namespace hostccl
