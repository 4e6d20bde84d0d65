// The environment registry and docs/environment.md list the same variables.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "common/env.h"

TEST(EnvRegistry, MatchesTheDocumentation) {
    std::ifstream in(HOSTCCL_SOURCE_DIR "/docs/environment.md");
    ASSERT_TRUE(in) << "docs/environment.md is missing";
    std::stringstream ss;
    ss << in.rdbuf();
    std::string doc = ss.str();
    std::set<std::string> documented;
    std::regex row(R"(\n\| `([A-Za-z0-9_]+)` \|)");
    for (std::sregex_iterator it(doc.begin(), doc.end(), row), end; it != end; ++it) documented.insert((*it)[1]);
    std::set<std::string> registered;
    for (const auto& v : hostccl::env::registry()) registered.insert(v.name);
    EXPECT_EQ(documented, registered);
}

TEST(EnvRegistry, MalformedValuesFallBackToTheDefault) {
    setenv("HCCL_CONNECT_TIMEOUT", "abc", 1);
    EXPECT_EQ(hostccl::env::getInt("HCCL_CONNECT_TIMEOUT", 1, 7200), 120);
    setenv("HCCL_CONNECT_TIMEOUT", "99999", 1);
    EXPECT_EQ(hostccl::env::getInt("HCCL_CONNECT_TIMEOUT", 1, 7200), 120);
    setenv("HCCL_CONNECT_TIMEOUT", "300", 1);
    EXPECT_EQ(hostccl::env::getInt("HCCL_CONNECT_TIMEOUT", 1, 7200), 300);
    unsetenv("HCCL_CONNECT_TIMEOUT");
}
