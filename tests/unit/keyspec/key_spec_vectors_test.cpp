// The shared test vectors (tests/vectors/keyspec/*.json), also checked by tests/python/check_key_vectors.py.
#include <gtest/gtest.h>
#include <simdjson.h>

#include "hbingest/event_formats/json_event.h"
#include "hbingest/keyspec/key_spec.h"
#include "test_support.h"

namespace hbingest::keyspec {
namespace {

TEST(KeySpecVectors, CppMatchesEveryVector) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.load(HBINGEST_KEYSPEC_VECTORS).get(doc), simdjson::SUCCESS) << HBINGEST_KEYSPEC_VECTORS;
  int checked = 0;
  for (const auto item : doc["cases"].get_array()) {
    const std::string name(std::string_view(item["name"].get_string()));
    SCOPED_TRACE(name);
    // JSON is YAML: the spec object goes through the ordinary YAML loader.
    const auto spec = KeySpec::from_yaml_text(simdjson::minify(item["spec"]), name);
    event_formats::JsonEvent event;
    ASSERT_FALSE(event.parse(simdjson::minify(item["event"])));
    KafkaMeta meta;
    std::string topic;
    simdjson::dom::object m;
    if (!item["meta"].get_object().get(m)) {
      if (std::string_view t; !m["topic"].get_string().get(t)) topic = t;
      if (std::int64_t v = 0; !m["partition"].get_int64().get(v)) meta.partition = static_cast<std::int32_t>(v);
      if (std::int64_t v = 0; !m["offset"].get_int64().get(v)) meta.offset = v;
      if (std::int64_t v = 0; !m["timestamp_ms"].get_int64().get(v)) meta.timestamp_ms = v;
    }
    meta.topic = topic;
    const std::string expected(std::string_view(item["key_hex"].get_string()));
    std::string key;
    const auto err = spec.encode(event, meta, key);
    ASSERT_FALSE(err) << err->message();
    EXPECT_EQ(testing::to_hex(key), expected);
    EXPECT_NO_THROW(spec.decode(key));
    if (std::string_view preset; !item["preset"].get_string().get(preset)) {
      std::string from_preset;
      ASSERT_FALSE(KeySpec::preset(preset).encode(event, meta, from_preset));
      EXPECT_EQ(testing::to_hex(from_preset), expected) << "preset " << preset << " differs from the vector's spec";
    }
    ++checked;
  }
  EXPECT_GE(checked, 20);
}

}  // namespace
}  // namespace hbingest::keyspec
