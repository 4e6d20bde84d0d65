// Where a Slurm step's ranks meet without HOSTCCL_ROOT_ADDR: the first host of the
// step's node list, on Slurm's reserved port or one derived from the job and step ids.
#include <gtest/gtest.h>

#include <cstdlib>
#include <set>
#include <string>

#include "core/slurm_meeting_point.h"
#include "hostccl/hostccl.h"

namespace {

TEST(SlurmMeetingPoint, TheFirstHostOfAHostList) {
    EXPECT_EQ(hostccl::firstSlurmHost("node7"), "node7");
    EXPECT_EQ(hostccl::firstSlurmHost("login,node[1-4]"), "login");
    EXPECT_EQ(hostccl::firstSlurmHost("node[03-05,9],login"), "node03");
    EXPECT_EQ(hostccl::firstSlurmHost("node[9,3-5]"), "node9");
    EXPECT_EQ(hostccl::firstSlurmHost("rack[2-3]-gpu"), "rack2-gpu");
    EXPECT_EQ(hostccl::firstSlurmHost("ns-a.cluster,ns-b.cluster"), "ns-a.cluster");
    for (const char* bad : {"", "[1-2]", "node[", "node[1-2", "node]1", "node[x-2]", "node[]"})
        EXPECT_EQ(hostccl::firstSlurmHost(bad), "") << bad;
}

TEST(SlurmMeetingPoint, StepsOfOneJobNeverShareAPort) {
    for (uint64_t job : {1ull, 4242ull, 987654321ull}) {
        std::set<uint16_t> ports;
        for (uint64_t step = 0; step < hostccl::kSlurmPortSpan; ++step) {
            const uint16_t p = hostccl::slurmStepPort(job, step);
            EXPECT_GE(p, hostccl::kSlurmFirstPort);
            EXPECT_LT(p, hostccl::kSlurmFirstPort + hostccl::kSlurmPortSpan);
            ports.insert(p);
        }
        EXPECT_EQ(ports.size(), size_t(hostccl::kSlurmPortSpan)) << "job " << job;
    }
}

struct SlurmEnv {
    SlurmEnv(const char* nodes, const char* job, const char* step, const char* reserved) {
        set("SLURM_STEP_NODELIST", nodes);
        set("SLURM_JOB_ID", job);
        set("SLURM_STEP_ID", step);
        set("SLURM_STEP_RESV_PORTS", reserved);
        unsetenv("SLURM_JOB_NODELIST");
    }
    ~SlurmEnv() {
        for (const char* v : {"SLURM_STEP_NODELIST", "SLURM_JOB_ID", "SLURM_STEP_ID", "SLURM_STEP_RESV_PORTS"}) unsetenv(v);
    }
    static void set(const char* name, const char* value) {
        if (value) setenv(name, value, 1);
        else unsetenv(name);
    }
};

TEST(SlurmMeetingPoint, ReservedPortsWinOverTheDerivedOne) {
    std::string host, why;
    uint16_t port = 0;
    {
        SlurmEnv env("node[01-02]", "4242", "3", "12000-12003");
        ASSERT_TRUE(hostccl::slurmMeetingPoint(&host, &port, &why)) << why;
        EXPECT_EQ(host, "node01");
        EXPECT_EQ(port, 12000);
    }
    {
        SlurmEnv env("node[01-02]", "4242", "3", nullptr);
        ASSERT_TRUE(hostccl::slurmMeetingPoint(&host, &port, &why)) << why;
        EXPECT_EQ(port, hostccl::slurmStepPort(4242, 3));
    }
}

TEST(SlurmMeetingPoint, WhatIsMissingIsNamedWithTheVariableToSet) {
    std::string host, why;
    uint16_t port = 0;
    {
        SlurmEnv env(nullptr, "4242", "0", nullptr);
        EXPECT_FALSE(hostccl::slurmMeetingPoint(&host, &port, &why));
        EXPECT_NE(why.find("HOSTCCL_ROOT_ADDR"), std::string::npos) << why;
    }
    {
        SlurmEnv env("node1", "4242", nullptr, nullptr);
        EXPECT_FALSE(hostccl::slurmMeetingPoint(&host, &port, &why));
        EXPECT_NE(why.find("SLURM_STEP_ID"), std::string::npos) << why;
        EXPECT_NE(why.find("HOSTCCL_ROOT_ADDR"), std::string::npos) << why;
    }
}

// The public call: what HostcclCommInitFromEnv would use, an explicit address first.
TEST(SlurmMeetingPoint, ThePublicCallGivesTheMeetingPointOrNotFound) {
    for (const char* v : {"HOSTCCL_ROOT_ADDR", "MASTER_ADDR", "MASTER_PORT", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "RANK"})
        unsetenv(v);
    char host[64];
    uint32_t port = 0;
    setenv("SLURM_PROCID", "1", 1);
    setenv("SLURM_NTASKS", "4", 1);
    {
        SlurmEnv env("node[7-8]", "99", "2", nullptr);
        ASSERT_EQ(HostcclGetLauncherMeetingPoint(host, sizeof host, &port), HCCL_SUCCESS);
        EXPECT_STREQ(host, "node7");
        EXPECT_EQ(port, hostccl::slurmStepPort(99, 2));
        char small[5];
        EXPECT_EQ(HostcclGetLauncherMeetingPoint(small, sizeof small, &port), HCCL_E_PARA) << "node7 needs 6 bytes";
        setenv("HOSTCCL_ROOT_ADDR", "10.1.2.3:4567", 1);
        ASSERT_EQ(HostcclGetLauncherMeetingPoint(host, sizeof host, &port), HCCL_SUCCESS);
        EXPECT_STREQ(host, "10.1.2.3");
        EXPECT_EQ(port, 4567u);
        unsetenv("HOSTCCL_ROOT_ADDR");
    }
    {
        SlurmEnv env(nullptr, "99", "2", nullptr);  // no node list: nowhere to meet
        EXPECT_EQ(HostcclGetLauncherMeetingPoint(host, sizeof host, &port), HCCL_E_NOT_FOUND);
    }
    unsetenv("SLURM_PROCID");
    unsetenv("SLURM_NTASKS");
    EXPECT_EQ(HostcclGetLauncherMeetingPoint(host, sizeof host, &port), HCCL_E_NOT_FOUND) << "no launcher";
    EXPECT_EQ(HostcclGetLauncherMeetingPoint(nullptr, 8, &port), HCCL_E_PTR);
}

}  // namespace
