// The Confluent wire format's frame: what it reads, and what it refuses with which reason.
#include "hbingest/event_formats/confluent_frame.h"

#include <gtest/gtest.h>

#include <string>

#include "fake_schema_registry.h"

namespace hbingest::event_formats {
namespace {

using testing::confluent_framed;

TEST(ConfluentFrame, ReadsTheIdBigEndianAndViewsThePayload) {
  ConfluentFrame frame;
  const auto message = confluent_framed(0x01020304, "payload");
  ASSERT_FALSE(read_confluent_frame(message, false, frame));
  EXPECT_EQ(frame.schema_id, 0x01020304);
  EXPECT_EQ(frame.payload, "payload");
  EXPECT_TRUE(frame.message_indexes.empty());
}

TEST(ConfluentFrame, ASingleZeroByteIsTheFirstMessage) {
  ConfluentFrame frame;
  const auto message = confluent_framed(7, std::string("\0rest", 5));
  ASSERT_FALSE(read_confluent_frame(message, true, frame));
  EXPECT_EQ(frame.message_indexes, std::vector<std::int32_t>{0});
  EXPECT_EQ(frame.payload, "rest");
}

TEST(ConfluentFrame, MessageIndexesAreZigZagVarints) {
  ConfluentFrame frame;
  // count 2 (zig-zag 4), indexes 1 (2) and 70 (140 = 0x8c 0x01)
  const auto message = confluent_framed(7, std::string("\x04\x02\x8c\x01pay", 7));
  ASSERT_FALSE(read_confluent_frame(message, true, frame));
  EXPECT_EQ(frame.message_indexes, (std::vector<std::int32_t>{1, 70}));
  EXPECT_EQ(frame.payload, "pay");
}

TEST(ConfluentFrame, JsonAndTextAreNotFramedAndSaySo) {
  ConfluentFrame frame;
  auto failure = read_confluent_frame(R"({"event_id":"login"})", false, frame);
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->reason, "not_confluent_framed");
  EXPECT_EQ(failure->message, "first byte 0x7b, looks like JSON, not the magic byte 0");
  failure = read_confluent_frame("hello", false, frame);
  EXPECT_NE(failure->message.find("looks like text"), std::string::npos) << failure->message;
  failure = read_confluent_frame("", false, frame);
  EXPECT_EQ(failure->reason, "not_confluent_framed");
  EXPECT_EQ(failure->kind, DecodeFailure::Kind::invalid);
}

TEST(ConfluentFrame, TruncatedFramesAreInvalidAtEveryLength) {
  const auto full = confluent_framed(7, std::string("\x04\x02\x8c\x01", 4));
  for (std::size_t n = 1; n < full.size(); ++n) {
    ConfluentFrame frame;
    const auto failure = read_confluent_frame(full.substr(0, n), true, frame);
    ASSERT_TRUE(failure) << n;
    EXPECT_EQ(failure->reason, "truncated_frame") << n;
  }
}

TEST(ConfluentFrame, AHugeOrNegativeIndexCountIsRefusedWithoutReadingIt) {
  ConfluentFrame frame;
  // 10^6 indexes claimed (zig-zag 2,000,000 = 0x80 0x89 0x7a), a million zero bytes given
  std::string rest("\x80\x89\x7a", 3);
  rest.append(1000000, '\0');
  auto failure = read_confluent_frame(confluent_framed(7, rest), true, frame);
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->reason, "bad_frame");
  EXPECT_NE(failure->message.find("count 1000000"), std::string::npos) << failure->message;
  EXPECT_EQ(failure->schema_id, 7);
  failure = read_confluent_frame(confluent_framed(7, std::string("\x01\x00", 2)), true, frame);  // count -1
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->reason, "bad_frame");
  // A varint that never ends within 5 bytes
  failure = read_confluent_frame(confluent_framed(7, std::string("\xff\xff\xff\xff\xff\xff", 6)), true, frame);
  ASSERT_TRUE(failure);
  EXPECT_EQ(failure->reason, "truncated_frame");
}

}  // namespace
}  // namespace hbingest::event_formats
