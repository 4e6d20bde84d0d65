#include "core/net/whitelist.h"

#include <arpa/inet.h>

#include <algorithm>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/env.h"
#include "common/error.h"

namespace hostccl::net {

namespace {
struct State {
    std::mutex mutex;
    bool enforced = false;
    std::vector<std::string> ips;
};
State& state() {
    static State* s = new State;  // read by listener threads that never exit
    return *s;
}

bool validIpv4(const std::string& ip) {
    in_addr a{};
    return inet_pton(AF_INET, ip.c_str(), &a) == 1;
}
}  // namespace

bool parseWhitelist(const std::string& text, std::vector<std::string>* ips, std::string* why) {
    nlohmann::json doc = nlohmann::json::parse(text, nullptr, false);
    if (doc.is_discarded() || !doc.is_object()) {
        *why = "not a JSON object";
        return false;
    }
    auto it = doc.find("host_ip");
    if (it == doc.end() || !it->is_array()) {
        *why = "no \"host_ip\" array";
        return false;
    }
    ips->clear();
    for (const auto& v : *it) {
        if (!v.is_string() || !validIpv4(v.get<std::string>())) {
            *why = "\"host_ip\" holds " + v.dump(-1).substr(0, 64) + ", not an IPv4 address";
            return false;
        }
        ips->push_back(v.get<std::string>());
    }
    return true;
}

HcclResult loadWhitelist() {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    s.enforced = env::getString("HCCL_WHITELIST_DISABLE") == "0";
    s.ips.clear();
    if (!s.enforced) return HCCL_SUCCESS;
    const std::string path = env::getString("HCCL_WHITELIST_FILE");
    if (path.empty()) return fail(HCCL_E_PARA, "HCCL_WHITELIST_DISABLE=0 but HCCL_WHITELIST_FILE is not set");
    std::ifstream in(path);
    std::stringstream text;
    text << in.rdbuf();
    if (!in) return fail(HCCL_E_PARA, "HCCL_WHITELIST_FILE {} cannot be read", path);
    std::string why;
    std::vector<std::string> ips;
    if (!parseWhitelist(text.str(), &ips, &why)) return fail(HCCL_E_PARA, "HCCL_WHITELIST_FILE {}: {}", path, why);
    s.ips = std::move(ips);
    log::info("whitelist: admitting connections from {} host(s) listed in {}", s.ips.size(), path);
    return HCCL_SUCCESS;
}

bool whitelistAdmits(const std::string& ip) {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    return !s.enforced || std::find(s.ips.begin(), s.ips.end(), ip) != s.ips.end();
}

}  // namespace hostccl::net
