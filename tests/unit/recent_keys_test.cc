// RecentKeys (common/recent_keys.h): the memory of ended sessions that decides
// whether a failure notice is turned away or kept for a session still to start.
#include <gtest/gtest.h>

#include "common/recent_keys.h"

namespace hostccl::recent_keys_test {

TEST(RecentKeys, RemembersTheNewestAndForgetsTheOldest) {
    RecentKeys<int> ended(3);
    for (int k = 1; k <= 5; ++k) ended.remember(k);
    EXPECT_FALSE(ended.contains(1));
    EXPECT_FALSE(ended.contains(2));
    EXPECT_TRUE(ended.contains(3));
    EXPECT_TRUE(ended.contains(4));
    EXPECT_TRUE(ended.contains(5));
}

TEST(RecentKeys, AKeyRememberedAgainCountsFromThen) {
    RecentKeys<int> ended(3);
    ended.remember(1);
    ended.remember(2);
    ended.remember(1);  // ended again: now the newest
    ended.remember(3);  // pushes out 1's first stamp, not 1
    EXPECT_TRUE(ended.contains(1));
    EXPECT_TRUE(ended.contains(2));
    ended.remember(4);  // pushes out 2
    EXPECT_TRUE(ended.contains(1));
    EXPECT_FALSE(ended.contains(2));
    EXPECT_TRUE(ended.contains(3));
    EXPECT_TRUE(ended.contains(4));
}

TEST(RecentKeys, AForgottenKeyIsNotContainedAndItsOldStampForgetsNothing) {
    RecentKeys<int> ended(2);
    ended.remember(7);
    ended.forget(7);  // started again
    EXPECT_FALSE(ended.contains(7));
    ended.remember(8);
    ended.remember(7);  // ended again: pushes out 7's first stamp, which must not forget 7
    ended.remember(9);  // pushes out 8
    EXPECT_TRUE(ended.contains(7));
    EXPECT_FALSE(ended.contains(8));
    EXPECT_TRUE(ended.contains(9));
}

}  // namespace hostccl::recent_keys_test
