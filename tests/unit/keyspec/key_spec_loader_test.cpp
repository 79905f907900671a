// Bad specs fail at load with "<source>:<line>:<col>: component '<name>': <reason>".
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include "hbingest/keyspec/key_spec.h"

namespace hbingest::keyspec {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

std::string load_error(const std::string& yaml) {
  try {
    KeySpec::from_yaml_text(yaml, "spec.yaml");
  } catch (const SpecError& e) {
    return e.what();
  }
  return "no error";
}

TEST(KeySpecLoader, UnknownComponentTypeNamesFileLineAndComponent) {
  const auto msg = load_error("components:\n  - {type: salt}\n  - {name: ev, type: strange}\n");
  EXPECT_THAT(msg, StartsWith("spec.yaml:3:"));
  EXPECT_THAT(msg, HasSubstr("component 'ev': unknown component type 'strange'"));
}

TEST(KeySpecLoader, WidthOutOfRange) {
  EXPECT_THAT(load_error("components:\n  - {type: int, field: n, width: 25}\n"),
              AllOf(StartsWith("spec.yaml:2:"), HasSubstr("component 'n': 'width' 25 out of range [1, 19]")));
  EXPECT_THAT(load_error("components:\n  - {type: salt, buckets: 300}\n"), HasSubstr("'buckets' 300 out of range [1, 256]"));
  EXPECT_THAT(load_error("components:\n  - {type: salt, buckets: 100, width: 1}\n"),
              HasSubstr("width 1 cannot hold 100 values"));
  EXPECT_THAT(load_error("components:\n  - {type: int, field: n, encoding: binary, width: 5}\n"),
              HasSubstr("binary width must be 4 or 8"));
}

TEST(KeySpecLoader, DuplicateNames) {
  EXPECT_THAT(load_error("components:\n  - {type: field, field: a, width: 2}\n  - {type: field, field: a, width: 3}\n"),
              AllOf(StartsWith("spec.yaml:3:"), HasSubstr("component 'a': duplicate component name")));
}

TEST(KeySpecLoader, StructuralErrors) {
  EXPECT_THAT(load_error("components: []\n"), HasSubstr("'components' must be a non-empty list"));
  EXPECT_THAT(load_error("components:\n  - {type: field, field: a}\n"), HasSubstr("exactly one of 'width'"));
  EXPECT_THAT(load_error("components:\n  - {type: field, field: a, width: 2, colour: red}\n"),
              AllOf(StartsWith("spec.yaml:2:"), HasSubstr("unknown key 'colour' for type field")));
  EXPECT_THAT(load_error("components:\n  - {type: partition}\n  - {type: salt}\n"), HasSubstr("a salt must be the first"));
  EXPECT_THAT(load_error("components:\n  - {type: time, field: t, format: yyyyMMddhh}\n"),
              HasSubstr("unsupported time pattern letter 'h'"));
  EXPECT_THAT(load_error("components:\n  - {type: time, field: t, format: yyyyddMM}\n"), HasSubstr("without gaps"));
  EXPECT_THAT(load_error("components:\n  - {type: time, field: t, reversed: true, format: yyyyMMdd}\n"),
              HasSubstr("reversed time needs format binary or decimal"));
  EXPECT_THAT(load_error("components:\n  - {type: dict, field: e, values: {a: \"1\", b: \"22\"}}\n"),
              HasSubstr("same length"));
  EXPECT_THAT(load_error("components:\n  - {type: salt, random: true, of: [field:x]}\n"), HasSubstr("random salt takes no"));
  EXPECT_THAT(load_error("max_key_length: 4\ncomponents:\n  - {type: offset}\n"), HasSubstr("more than max_key_length 4"));
  EXPECT_THAT(load_error("max_key_length: 40000\ncomponents:\n  - {type: offset}\n"), HasSubstr("[1, 32767]"));
  EXPECT_THAT(load_error("components:\n  - {type: hash, of: [user]}\n"), HasSubstr("unknown input 'user'"));
  EXPECT_THAT(load_error("components: [\n"), StartsWith("spec.yaml:"));
}

TEST(KeySpecLoader, ImpossiblePlanIsALoadError) {
  const auto msg = load_error(
      "time_component: t\ncomponents:\n  - {name: h, type: hash, of: [kafka:offset]}\n  - {name: t, type: time, field: ts}\n");
  EXPECT_THAT(msg, AllOf(StartsWith("spec.yaml:3:"), HasSubstr("component 'h': impossible plan"), HasSubstr("kafka:offset")));
  EXPECT_THAT(load_error("time_component: t\ncomponents:\n  - {name: t, type: time, field: ts, format: yyyy-MM}\n"),
              HasSubstr("cannot be the time component"));
}

TEST(KeySpecLoader, FromNodeKeepsDocumentLines) {
  const YAML::Node doc = YAML::Load("kafka: {}\nhbase: {}\nkey:\n  components:\n    - {type: bogus}\n");
  try {
    KeySpec::from_yaml_node(doc["key"], "config.yaml");
    FAIL() << "expected SpecError";
  } catch (const SpecError& e) {
    EXPECT_THAT(std::string(e.what()), StartsWith("config.yaml:5:"));
  }
}

TEST(KeySpecLoader, FromFileNamesThePath) {
  EXPECT_THAT([] {
    try {
      KeySpec::from_yaml_file("/nonexistent/spec.yaml");
    } catch (const SpecError& e) {
      return std::string(e.what());
    }
    return std::string();
  }(), HasSubstr("/nonexistent/spec.yaml"));
}

TEST(KeySpecLoader, DefaultsAndInfo) {
  const auto spec = KeySpec::from_yaml_text(
      "components:\n  - {type: salt}\n  - {type: field, field: event_id, width: 8}\n  - {type: time, field: ts}\n", "x");
  ASSERT_EQ(spec.components().size(), 3u);
  EXPECT_EQ(spec.components()[0].name, "salt");
  EXPECT_EQ(spec.components()[0].source, "kafka:partition+kafka:offset");
  EXPECT_EQ(spec.components()[1].name, "event_id");
  EXPECT_EQ(spec.components()[1].source, "field:event_id");
  EXPECT_EQ(spec.components()[2].width, 17u);
  EXPECT_EQ(spec.event_component(), "event_id");
  EXPECT_EQ(spec.time_component(), "time");
  EXPECT_EQ(spec.max_key_length(), 256u);
  EXPECT_EQ(spec.source_name(), "x");
}

TEST(KeySpecLoader, PresetParamsAreChecked) {
  EXPECT_THROW(KeySpec::preset("nope"), SpecError);
  EXPECT_THROW(KeySpec::preset("events", {{"colour", "red"}}), SpecError);
  EXPECT_THROW(KeySpec::preset("events", {{"event_field", "a\"}"}}), SpecError);
  EXPECT_EQ(KeySpec::preset("events", {{"buckets", "16"}}).salt_buckets(), 16);
  EXPECT_EQ(KeySpec::preset_names().size(), 8u);
  for (const auto& name : KeySpec::preset_names()) EXPECT_NO_THROW(KeySpec::preset(name)) << name;
}

}  // namespace
}  // namespace hbingest::keyspec
