// The health channel's frame codec and the communicator's first-failure record.
#include <gtest/gtest.h>

#include <cstring>

#include "common/comm_failure.h"
#include "core/health/health_frame.h"

using namespace hostccl;
using namespace hostccl::health;

namespace {

TEST(HealthFrame, RoundTripsAndSplitsAStream) {
    Frame a;
    a.type = FrameType::Failure;
    a.code = HCCL_E_PARA;
    a.culprit = 3;
    a.seq = 17;
    a.text = "rank 2 receiving from rank 3: operation mismatch";
    Frame b;
    b.type = FrameType::Goodbye;
    std::string wire = encodeFrame(a) + encodeFrame(b);
    Frame got;
    size_t used = 0;
    std::string why;
    ASSERT_EQ(decodeFrame(wire.data(), wire.size(), 4, &got, &used, &why), Decoded::Ok) << why;
    EXPECT_EQ(got.type, FrameType::Failure);
    EXPECT_EQ(got.code, HCCL_E_PARA);
    EXPECT_EQ(got.culprit, 3);
    EXPECT_EQ(got.seq, 17u);
    EXPECT_EQ(got.text, a.text);
    EXPECT_EQ(used, kHealthHeaderBytes + a.text.size());
    ASSERT_EQ(decodeFrame(wire.data() + used, wire.size() - used, 4, &got, &used, &why), Decoded::Ok);
    EXPECT_EQ(got.type, FrameType::Goodbye);
    EXPECT_EQ(got.text, "");
    // Every prefix of a frame asks for more.
    std::string one = encodeFrame(a);
    for (size_t n = 0; n < one.size(); ++n)
        EXPECT_EQ(decodeFrame(one.data(), n, 4, &got, &used, &why), Decoded::NeedMore) << n;
}

TEST(HealthFrame, RejectsWhatNoPeerSends) {
    Frame f;
    f.type = FrameType::Heartbeat;
    Frame got;
    size_t used = 0;
    std::string why;
    std::string wire = encodeFrame(f);
    wire[0] ^= 1;  // magic
    EXPECT_EQ(decodeFrame(wire.data(), wire.size(), 4, &got, &used, &why), Decoded::Bad);
    wire = encodeFrame(f);
    wire[4] = 9;  // type
    EXPECT_EQ(decodeFrame(wire.data(), wire.size(), 4, &got, &used, &why), Decoded::Bad);
    f.culprit = 4;  // outside a 4-rank communicator
    wire = encodeFrame(f);
    EXPECT_EQ(decodeFrame(wire.data(), wire.size(), 4, &got, &used, &why), Decoded::Bad);
    f.culprit = -1;
    wire = encodeFrame(f);
    uint16_t tooLong = kMaxHealthText + 1;
    std::memcpy(&wire[6], &tooLong, sizeof tooLong);
    EXPECT_EQ(decodeFrame(wire.data(), wire.size(), 4, &got, &used, &why), Decoded::Bad);
    f.text = std::string(5000, 'x');  // the encoder caps the text
    wire = encodeFrame(f);
    ASSERT_EQ(decodeFrame(wire.data(), wire.size(), 4, &got, &used, &why), Decoded::Ok);
    EXPECT_EQ(got.text.size(), kMaxHealthText);
}

TEST(CommFailure, FirstFailureWinsAndWakesOnce) {
    CommFailure f;
    int wakes = 0;
    f.setWaker([&] { ++wakes; });
    EXPECT_FALSE(f.failed());
    EXPECT_EQ(f.code(), HCCL_SUCCESS);
    EXPECT_TRUE(f.raise(HCCL_E_REMOTE, 2, "rank 2 is gone"));
    EXPECT_FALSE(f.raise(HCCL_E_TCP_TRANSFER, 1, "a consequence", false));
    EXPECT_TRUE(f.failed());
    CommFailure::Record r = f.record();
    EXPECT_EQ(r.code, HCCL_E_REMOTE);
    EXPECT_EQ(r.culprit, 2);
    EXPECT_EQ(r.text, "rank 2 is gone");
    EXPECT_TRUE(r.local);
    EXPECT_EQ(wakes, 1);
}

}  // namespace
