#include "core/comm_options.h"

#include <cstring>

#include "common/env.h"

namespace hostccl {

namespace {
struct ConfigHeader {
    size_t size;
    uint32_t magicWord;
    uint32_t version;
    uint64_t reserved;
};
static_assert(sizeof(ConfigHeader) == HCCL_COMM_CONFIG_INFO_BYTES, "config header layout");

uint32_t processDeterministic = 0;  // HcclSetConfig(HCCL_DETERMINISTIC)
bool processDeterministicSet = false;

bool terminated(const char* s, size_t cap) { return std::memchr(s, '\0', cap) != nullptr; }
}  // namespace

void setProcessDeterministic(uint32_t v) {
    processDeterministic = v;
    processDeterministicSet = true;
}
uint32_t getProcessDeterministic() { return processDeterministic; }

CommOptions optionsFromEnv() {
    CommOptions o;
    o.bufferSizeMB = static_cast<uint32_t>(env::getInt("HCCL_BUFFSIZE", 1, 1 << 20));
    std::string det = env::getString("HCCL_DETERMINISTIC");
    o.deterministic = det == "true" || det == "TRUE" ? 1 : det == "strict" || det == "STRICT" ? 2 : 0;
    if (processDeterministicSet) o.deterministic = processDeterministic;
    o.execTimeoutSec = env::getInt("HCCL_EXEC_TIMEOUT", 0, INT32_MAX);
    o.algo = env::getString("HCCL_ALGO");
    o.probeCosts = env::getBool("HOSTCCL_COST_PROBE");
    return o;
}

namespace {
// The texts that must parse before anything is connected.
HcclResult parseAlgo(CommOptions* out) {
    std::string why;
    if (!parseAlgoOverride(out->algo, &out->algoOverride, &why))
        return fail(HCCL_E_PARA, "HCCL_ALGO / hcclAlgo \"{}\": {}", out->algo, why);
    const std::string costs = env::getString("HOSTCCL_COST_MODEL");
    if (!applyCostConfig(costs, &out->costs, &why)) return fail(HCCL_E_PARA, "HOSTCCL_COST_MODEL \"{}\": {}", costs, why);
    return HCCL_SUCCESS;
}
}  // namespace

HcclResult optionsFromConfig(const HcclCommConfig* config, CommOptions* out) {
    *out = optionsFromEnv();
    if (config == nullptr) return parseAlgo(out);
    ConfigHeader h;
    std::memcpy(&h, config->reserved, sizeof h);
    if (h.magicWord != HCCL_COMM_CONFIG_MAGIC_WORD)
        return fail(HCCL_E_PARA, "config: bad magic word {:#x}; initialise it with HcclCommConfigInit", h.magicWord);
    if (h.version > HCCL_COMM_CONFIG_VERSION)
        log::warn("config: version {} is newer than this library's {}; reading the fields of {}", h.version,
                  HCCL_COMM_CONFIG_VERSION, HCCL_COMM_CONFIG_VERSION);
    const uint32_t v = h.version;
    if (v >= 1 && config->hcclBufferSize != HCCL_COMM_BUFFSIZE_CONFIG_NOT_SET) {
        if (config->hcclBufferSize == 0) return fail(HCCL_E_PARA, "config: hcclBufferSize must be at least 1 MB");
        out->bufferSizeMB = config->hcclBufferSize;
    }
    if (v >= 1 && config->hcclDeterministic != HCCL_COMM_DETERMINISTIC_CONFIG_NOT_SET) {
        if (config->hcclDeterministic > 2)
            return fail(HCCL_E_PARA, "config: hcclDeterministic {} is not 0, 1 or 2", config->hcclDeterministic);
        out->deterministic = config->hcclDeterministic;
    }
    if (v >= 2) {
        if (!terminated(config->hcclCommName, COMM_NAME_MAX_LENGTH))
            return fail(HCCL_E_PARA, "config: hcclCommName is not NUL-terminated within {} bytes", COMM_NAME_MAX_LENGTH);
        out->name = config->hcclCommName;
    }
    if (v >= 6) {
        out->worldRankId = config->hcclWorldRankID;
        out->jobId = config->hcclJobID;
    }
    if (v >= 8) {
        if (config->hcclExecTimeOut != HCCL_COMM_EXECTIMEOUT_CONFIG_NOT_SET) {
            if (config->hcclExecTimeOut < 0)
                return fail(HCCL_E_PARA, "config: hcclExecTimeOut {} is negative", config->hcclExecTimeOut);
            out->execTimeoutSec = config->hcclExecTimeOut;
        }
        if (!terminated(config->hcclAlgo, HCCL_COMM_ALGO_MAX_LENGTH))
            return fail(HCCL_E_PARA, "config: hcclAlgo is not NUL-terminated");
        if (config->hcclAlgo[0] != '\0') out->algo = config->hcclAlgo;
    }
    return parseAlgo(out);
}

Deadline connectDeadline() { return Deadline::afterSeconds(env::getInt("HCCL_CONNECT_TIMEOUT", 1, 7200)); }

}  // namespace hostccl
