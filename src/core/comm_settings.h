// A communicator's settings: HcclCommConfig fields where the caller's config
// version has them and sets them, else the environment, else HCCL's defaults.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "algorithms/algo_override.h"
#include "algorithms/cost_model/cost_params.h"
#include "common/deadline.h"
#include "common/error.h"
#include "hccl/hccl_types.h"

namespace hostccl {

struct CommSettings {
    uint32_t bufferSizeMB = 200;
    uint32_t deterministic = 0;
    std::string name;            // empty: the init path picks a default
    int64_t execTimeoutSec = 1836;  // 0 = no limit
    std::string algo;            // HCCL_ALGO or hcclAlgo as given
    AlgoOverride algoOverride;   // ... parsed (by optionsFromConfig)
    CostParams costs = CostParams::defaults();  // HOSTCCL_COST_MODEL over the defaults (by optionsFromConfig)
    bool probeCosts = true;                      // HOSTCCL_COST_PROBE
    std::optional<CostParams> inheritedCosts;    // a sub-communicator's parent's numbers: no probe
    uint32_t worldRankId = 0;
    uint64_t jobId = 0;
    // What HCCL_OP_EXPANSION_MODE / hcclOpExpansionMode asked for ("" = default); every
    // mode runs on host threads here, and the init line says so.
    std::string expansionAsked;
};

CommSettings optionsFromEnv();
// HcclSetConfig(HCCL_DETERMINISTIC, v): a process-wide default below the config.
void setProcessDeterministic(uint32_t v);
uint32_t getProcessDeterministic();
// Applies `config` on top of the environment; HCCL_E_PARA for a bad magic word, an
// unterminated name or an invalid algorithm override. A NULL config means
// environment only.
HcclResult optionsFromConfig(const HcclCommConfig* config, CommSettings* out);

// HCCL_CONNECT_TIMEOUT from now: the bound on every step of building a communicator.
Deadline connectDeadline();

}  // namespace hostccl
