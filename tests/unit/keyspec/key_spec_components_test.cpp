// One test group per component type: bytes written, errors named, decode back.
#include <gtest/gtest.h>

#include "hbingest/keyspec/key_spec.h"
#include "test_support.h"

namespace hbingest::keyspec {
namespace {

using testing::be64;
using testing::encode_or_throw;

KeySpec spec_of(const std::string& components) {
  return KeySpec::from_yaml_text("components:\n" + components, "test.yaml");
}

TEST(KeySpecComponents, FieldFixedWidthPadsWithByteOne) {
  const auto spec = spec_of("  - {type: field, field: e, width: 6}\n");
  EXPECT_EQ(encode_or_throw(spec, MapEventFields({{"e", std::string("ab")}})), std::string("ab\x01\x01\x01\x01"));
  EXPECT_EQ(encode_or_throw(spec, MapEventFields({{"e", std::int64_t{42}}})), std::string("42\x01\x01\x01\x01"));
  EXPECT_EQ(spec.decode(std::string("ab\x01\x01\x01\x01"))[0].text, "ab");
}

TEST(KeySpecComponents, FieldRightAlignedAndCustomPad) {
  const auto spec = spec_of("  - {type: field, field: u, width: 10, pad: \"\\x01\", align: right}\n");
  EXPECT_EQ(encode_or_throw(spec, MapEventFields({{"u", std::string("zhagnsan")}})), std::string("\x01\x01zhagnsan"));
}

TEST(KeySpecComponents, FieldErrorsNameComponentFieldAndReason) {
  const auto spec = spec_of("  - {name: event, type: field, field: event_id, width: 4}\n");
  std::string key;
  auto err = spec.encode(MapEventFields({{"event_id", std::string("toolong")}}), {}, key);
  ASSERT_TRUE(err);
  EXPECT_EQ(err->message(), "key component 'event' (field 'event_id'): too long for width 4 (got 7 bytes)");
  err = spec.encode(MapEventFields(), {}, key);
  ASSERT_TRUE(err);
  EXPECT_EQ(err->message(), "key component 'event' (field 'event_id'): missing");
  err = spec.encode(MapEventFields({{"event_id", 1.5}}), {}, key);
  ASSERT_TRUE(err);
  EXPECT_NE(err->reason.find("wrong type"), std::string::npos);
  err = spec.encode(MapEventFields({{"event_id", std::string("a\x01")}}), {}, key);
  ASSERT_TRUE(err);
  EXPECT_NE(err->reason.find("pad byte 0x01"), std::string::npos);
}

TEST(KeySpecComponents, FieldTerminatorAndMaxLength) {
  const auto spec =
      spec_of("  - {type: field, field: h, terminator: \"|\", max_length: 5}\n  - {type: literal, value: X}\n");
  EXPECT_EQ(encode_or_throw(spec, MapEventFields({{"h", std::string("web")}})), "web|X");
  std::string key;
  EXPECT_TRUE(spec.encode(MapEventFields({{"h", std::string("webserver")}}), {}, key));
  EXPECT_TRUE(spec.encode(MapEventFields({{"h", std::string("a|b")}}), {}, key));
  const auto parts = spec.decode("web|X");
  EXPECT_EQ(parts[0].text, "web");
  EXPECT_EQ(parts[0].end, 4u);
  EXPECT_EQ(parts[1].text, "X");
}

TEST(KeySpecComponents, SaltIsStableAndInRange) {
  const auto spec = spec_of("  - {type: salt, buckets: 100}\n");
  KafkaMeta meta;
  meta.partition = 3;
  meta.offset = 42;
  // Same (partition, offset) → same key: replays are idempotent.
  EXPECT_EQ(encode_or_throw(spec, MapEventFields(), meta), encode_or_throw(spec, MapEventFields(), meta));
  EXPECT_EQ(encode_or_throw(spec, MapEventFields(), meta), "14");  // xxh64 value, also in the Python vectors
  EXPECT_EQ(spec.salt_buckets(), 100);
}

TEST(KeySpecComponents, SaltBinaryOfFieldAndRandomWarns) {
  const auto spec = spec_of("  - {type: salt, buckets: 256, encoding: binary, of: [field:user]}\n");
  const auto a = encode_or_throw(spec, MapEventFields({{"user", std::string("u1")}}));
  EXPECT_EQ(a.size(), 1u);
  EXPECT_EQ(a, encode_or_throw(spec, MapEventFields({{"user", std::string("u1")}})));
  const auto random = spec_of("  - {type: salt, buckets: 10, random: true}\n");
  ASSERT_EQ(random.warnings().size(), 1u);
  EXPECT_NE(random.warnings()[0].find("replays duplicate rows"), std::string::npos);
  const int v = std::stoi(encode_or_throw(random, MapEventFields()));
  EXPECT_GE(v, 0);
  EXPECT_LT(v, 10);
}

TEST(KeySpecComponents, HashDigestsAndPrefix) {
  const auto md5 = spec_of("  - {type: hash, field: u}\n");
  EXPECT_EQ(testing::to_hex(encode_or_throw(md5, MapEventFields({{"u", std::string("alice")}}))),
            "6384e2b2184bcbf58eccf10ca7a6563c");  // md5sum of "alice"
  const auto sha1 = spec_of("  - {type: hash, field: u, algorithm: sha1, bytes: 4}\n");
  EXPECT_EQ(testing::to_hex(encode_or_throw(sha1, MapEventFields({{"u", std::string("abc")}}))),
            "a9993e36");  // SHA-1("abc") = a9993e36 4706816a ...
  const auto xxh = spec_of("  - {type: hash, field: u, algorithm: xxh64}\n");
  EXPECT_EQ(testing::to_hex(encode_or_throw(xxh, MapEventFields({{"u", std::string("abc")}}))),
            "44bc2cf5ad770999");  // XXH64("abc", 0) from the xxHash reference
  EXPECT_EQ(md5.decode(encode_or_throw(md5, MapEventFields({{"u", std::string("alice")}})))[0].text,
            "6384e2b2184bcbf58eccf10ca7a6563c");
}

TEST(KeySpecComponents, ReverseFixedWidth) {
  const auto spec = spec_of("  - {type: reverse, field: phone, width: 11}\n");
  EXPECT_EQ(encode_or_throw(spec, MapEventFields({{"phone", std::string("13800138000")}})), "00083100831");
  EXPECT_EQ(encode_or_throw(spec, MapEventFields({{"phone", std::string("123")}})),
            std::string("321") + std::string(8, '\x01'));
  EXPECT_EQ(spec.decode(std::string("321") + std::string(8, '\x01'))[0].text, "123");
  std::string key;
  EXPECT_TRUE(spec.encode(MapEventFields({{"phone", std::string("138001380001")}}), {}, key));
}

TEST(KeySpecComponents, TimeTextBinaryDecimalReversed) {
  const MapEventFields ev({{"ts", std::int64_t{1700000000123}}});
  EXPECT_EQ(encode_or_throw(spec_of("  - {type: time, field: ts}\n"), ev), "20231114221320123");
  EXPECT_EQ(encode_or_throw(spec_of("  - {type: time, field: ts, format: binary}\n"), ev), be64(1700000000123));
  EXPECT_EQ(encode_or_throw(spec_of("  - {type: time, field: ts, format: binary, reversed: true}\n"), ev),
            be64(9223372036854775807ULL - 1700000000123ULL));
  EXPECT_EQ(encode_or_throw(spec_of("  - {type: time, field: ts, format: decimal, reversed: true}\n"), ev),
            "9223370336854775684");
  EXPECT_EQ(encode_or_throw(spec_of("  - {type: time, field: ts, format: \"%Y-%m-%d %H:%M:%S.%L\"}\n"), ev),
            "2023-11-14 22:13:20.123");
  // Inputs: seconds, RFC 3339 with offset, Kafka timestamp.
  EXPECT_EQ(encode_or_throw(spec_of("  - {type: time, field: ts, input: epoch_s}\n"),
                            MapEventFields({{"ts", std::int64_t{1700000000}}})),
            "20231114221320000");
  EXPECT_EQ(encode_or_throw(spec_of("  - {type: time, field: ts}\n"),
                            MapEventFields({{"ts", std::string("2023-11-15T06:13:20.123+08:00")}})),
            "20231114221320123");
  KafkaMeta meta;
  meta.timestamp_ms = 1700000000123;
  EXPECT_EQ(encode_or_throw(spec_of("  - {type: time, kafka: timestamp}\n"), MapEventFields(), meta),
            "20231114221320123");
  std::string key;
  EXPECT_EQ(spec_of("  - {type: time, kafka: timestamp}\n").encode(MapEventFields(), KafkaMeta{}, key)->field,
            "kafka:timestamp");
  const auto parts = spec_of("  - {type: time, field: ts, format: binary, reversed: true}\n")
                         .decode(be64(9223372036854775807ULL - 1700000000123ULL));
  EXPECT_EQ(parts[0].number, 1700000000123);
  EXPECT_EQ(parts[0].text, "2023-11-14T22:13:20.123Z");
}

TEST(KeySpecComponents, IntTextBinaryReversed) {
  const MapEventFields ev({{"n", std::int64_t{42}}});
  EXPECT_EQ(encode_or_throw(spec_of("  - {type: int, field: n, width: 5}\n"), ev), "00042");
  EXPECT_EQ(encode_or_throw(spec_of("  - {type: int, field: n, width: 5, reversed: true}\n"), ev), "99957");
  EXPECT_EQ(encode_or_throw(spec_of("  - {type: int, field: n, encoding: binary, width: 4}\n"), ev),
            std::string("\0\0\0\x2a", 4));
  std::string key;
  EXPECT_NE(spec_of("  - {type: int, field: n, width: 1}\n").encode(ev, {}, key)->reason.find("too long for width 1"),
            std::string::npos);
  EXPECT_NE(spec_of("  - {type: int, field: n}\n")
                .encode(MapEventFields({{"n", std::int64_t{-1}}}), {}, key)
                ->reason.find("negative"),
            std::string::npos);
  EXPECT_EQ(spec_of("  - {type: int, field: n, width: 5, reversed: true}\n").decode("99957")[0].number, 42);
}

TEST(KeySpecComponents, BucketIsValueModN) {
  const auto spec = spec_of("  - {type: bucket, field: ts, buckets: 16}\n");
  EXPECT_EQ(encode_or_throw(spec, MapEventFields({{"ts", std::int64_t{1700000000123}}})), "11");  // 1700000000123 % 16
  EXPECT_EQ(spec.salt_buckets(), 16);
}

TEST(KeySpecComponents, DictMapsAndRejectsUnknown) {
  const auto spec = spec_of("  - {name: ev, type: dict, field: e, values: {login: \"01\", order: \"02\"}}\n");
  EXPECT_EQ(encode_or_throw(spec, MapEventFields({{"e", std::string("order")}})), "02");
  std::string key;
  const auto err = spec.encode(MapEventFields({{"e", std::string("logout")}}), {}, key);
  ASSERT_TRUE(err);
  EXPECT_EQ(err->message(), "key component 'ev' (field 'e'): unknown dict value 'logout'");
  EXPECT_EQ(spec.decode("01")[0].text, "login");
  EXPECT_THROW(spec.decode("03"), DecodeError);
}

TEST(KeySpecComponents, LiteralPartitionOffset) {
  const auto spec =
      spec_of("  - {type: literal, value: \"\\x02\"}\n  - {type: partition}\n  - {type: offset, encoding: binary}\n");
  KafkaMeta meta;
  meta.partition = 7;
  meta.offset = 258;
  EXPECT_EQ(encode_or_throw(spec, MapEventFields(), meta), std::string("\x02") + "0007" + be64(258));
  const auto sk = spec.sort_key(std::string("\x02") + "0007" + be64(258));
  EXPECT_FALSE(sk);  // no time component
}

TEST(KeySpecComponents, MaxKeyLengthEnforcedAtEncode) {
  const auto spec =
      KeySpec::from_yaml_text("max_key_length: 8\ncomponents:\n  - {type: field, field: a, terminator: \"|\"}\n", "t");
  std::string key;
  EXPECT_FALSE(spec.encode(MapEventFields({{"a", std::string("1234567")}}), {}, key));
  const auto err = spec.encode(MapEventFields({{"a", std::string("12345678")}}), {}, key);
  ASSERT_TRUE(err);
  EXPECT_EQ(err->reason, "key length 9 exceeds max_key_length 8");
}

TEST(KeySpecComponents, DecodeRejectsMalformedKeys) {
  const auto spec = KeySpec::preset("events");
  EXPECT_THROW(spec.decode("14"), DecodeError);
  EXPECT_THROW(spec.decode(std::string(58, 'x')), DecodeError);
  std::string key =
      encode_or_throw(spec, MapEventFields({{"event_id", std::string("login")}, {"ts", std::int64_t{1}}}));
  EXPECT_THROW(spec.decode(key + "z"), DecodeError);
  EXPECT_NO_THROW(spec.decode(key));
}

}  // namespace
}  // namespace hbingest::keyspec
