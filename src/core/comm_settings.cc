#include "core/comm_settings.h"

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

CommSettings optionsFromEnv() {
    CommSettings o;
    o.bufferSizeMB = static_cast<uint32_t>(env::getInt("HCCL_BUFFSIZE", 1, 1 << 20));
    std::string det = env::getString("HCCL_DETERMINISTIC");
    o.deterministic = det == "true" || det == "TRUE" ? 1 : det == "strict" || det == "STRICT" ? 2 : 0;
    if (processDeterministicSet) o.deterministic = processDeterministic;
    o.execTimeoutSec = env::getInt("HCCL_EXEC_TIMEOUT", 0, INT32_MAX);
    o.algo = env::getString("HCCL_ALGO");
    o.probeCosts = env::getBool("HOSTCCL_COST_PROBE");
    o.expansionAsked = env::getString("HCCL_OP_EXPANSION_MODE");
    return o;
}

namespace {
// HCCL's names for where operators are expanded; the config field numbers them.
constexpr const char* kExpansionModes[] = {"AI_CPU", "AIV", "HOST", "HOST_TS", "CCU_MS", "CCU_SCHED", "AIV_ONLY"};

bool knownExpansionMode(const std::string& s) {
    for (const char* m : kExpansionModes)
        if (s == m) return true;
    return false;
}

// "L0:0, L1:0, L2:0" (levels in any order, each at most once, values 0 or 1).
bool validRetrySetting(const std::string& s) {
    std::string compact;
    for (char c : s)
        if (c != ' ') compact += c;
    if (compact.empty()) return true;
    bool seen[3] = {false, false, false};
    size_t at = 0;
    while (at < compact.size()) {
        size_t end = compact.find(',', at);
        if (end == std::string::npos) end = compact.size();
        const std::string item = compact.substr(at, end - at);
        if (item.size() != 4 || item[0] != 'L' || item[1] < '0' || item[1] > '2' || item[2] != ':' ||
            (item[3] != '0' && item[3] != '1') || seen[item[1] - '0'])
            return false;
        seen[item[1] - '0'] = true;
        at = end + 1;
    }
    return compact.back() != ',';
}

HcclResult checkCompatibilitySettings(const CommSettings& o) {
    if (!o.expansionAsked.empty() && !knownExpansionMode(o.expansionAsked) && o.expansionAsked.rfind("config ", 0) != 0)
        return fail(HCCL_E_PARA, "HCCL_OP_EXPANSION_MODE \"{}\" is none of AI_CPU, AIV, AIV_ONLY, HOST, HOST_TS, CCU_MS, CCU_SCHED",
                    o.expansionAsked);
    const std::string retry = env::getString("HCCL_OP_RETRY_ENABLE");
    if (!validRetrySetting(retry))
        return fail(HCCL_E_PARA, "HCCL_OP_RETRY_ENABLE \"{}\" is not of the form L0:<0|1>, L1:<0|1>, L2:<0|1>", retry);
    return HCCL_SUCCESS;
}
}  // namespace

namespace {
// The texts that must parse before anything is connected.
HcclResult parseAlgo(CommSettings* out) {
    std::string why;
    if (!parseAlgoOverride(out->algo, &out->algoOverride, &why))
        return fail(HCCL_E_PARA, "HCCL_ALGO / hcclAlgo \"{}\": {}", out->algo, why);
    const std::string costs = env::getString("HOSTCCL_COST_MODEL");
    if (!applyCostConfig(costs, &out->costs, &why)) return fail(HCCL_E_PARA, "HOSTCCL_COST_MODEL \"{}\": {}", costs, why);
    return HCCL_SUCCESS;
}
}  // namespace

HcclResult optionsFromConfig(const HcclCommConfig* config, CommSettings* out) {
    *out = optionsFromEnv();
    if (config == nullptr) {
        HOSTCCL_CHECK(checkCompatibilitySettings(*out));
        return parseAlgo(out);
    }
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
    if (v >= 4 && config->hcclOpExpansionMode != HCCL_COMM_DEFAULT_OP_EXPANSION_MODE) {
        // HCCL Test passes its accelerator index (0 default .. 7 aicpu); anything larger is no mode.
        if (config->hcclOpExpansionMode > 7)
            return fail(HCCL_E_PARA, "config: hcclOpExpansionMode {} is not a mode (0-7)", config->hcclOpExpansionMode);
        out->expansionAsked = fmt::format("config {}", config->hcclOpExpansionMode);
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
    HOSTCCL_CHECK(checkCompatibilitySettings(*out));
    return parseAlgo(out);
}

Deadline connectDeadline() { return Deadline::afterSeconds(env::getInt("HCCL_CONNECT_TIMEOUT", 1, 7200)); }

}  // namespace hostccl
