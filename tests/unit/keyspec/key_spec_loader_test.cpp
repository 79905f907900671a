// Bad specs fail at load with every problem, one per line:
// "<source>:<line>:<col>: <path>: component '<name>': <reason>".
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <sstream>
#include <string>
#include <vector>

#include "hbingest/keyspec/key_spec.h"

namespace hbingest::keyspec {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::SizeIs;
using ::testing::StartsWith;

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

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

TEST(KeySpecLoader, ReportsEveryProblemAtOnceWithLineAndPath) {
  const std::string yaml =
      "name: demo\n"
      "max_key_lenght: 100\n"
      "components:\n"
      "  - {type: salt, buckets: 300}\n"
      "  - {name: ev, type: strange}\n"
      "  - {type: field, field: user, width: 8}\n";
  const auto lines = lines_of(load_error(yaml));
  ASSERT_THAT(lines, SizeIs(3)) << load_error(yaml);
  EXPECT_THAT(lines[0], AllOf(StartsWith("spec.yaml:2:1: max_key_lenght: "), HasSubstr("unknown key 'max_key_lenght'"),
                              HasSubstr("did you mean 'max_key_length'?")));
  EXPECT_THAT(lines[1], AllOf(StartsWith("spec.yaml:4:"), HasSubstr("components[0].buckets: component 'salt': "),
                              HasSubstr("'buckets' 300 out of range [1, 256]")));
  EXPECT_THAT(lines[2], AllOf(StartsWith("spec.yaml:5:"), HasSubstr("components[1].type: component 'ev': "),
                              HasSubstr("unknown component type 'strange'")));
}

TEST(KeySpecLoader, ProblemsAreListedOneByOneInDocumentOrder) {
  // The event_component reference is checked after the components, but reported where it stands.
  const std::string yaml =
      "event_component: nope\n"
      "components:\n"
      "  - {type: field, field: user, widht: 8}\n"
      "  - {type: time, field: ts, input: epoch_sec}\n";
  try {
    KeySpec::from_yaml_text(yaml, "spec.yaml");
    FAIL() << "expected SpecError";
  } catch (const SpecError& e) {
    EXPECT_THAT(
        e.problems(),
        ElementsAre(
            AllOf(StartsWith("spec.yaml:1:18: event_component: "), HasSubstr("'nope' is not a component")),
            AllOf(StartsWith("spec.yaml:3:5: components[0]: component 'user': "), HasSubstr("exactly one of 'width'")),
            AllOf(StartsWith("spec.yaml:3:32: components[0].widht: "),
                  HasSubstr("unknown key 'widht' for type field (did you mean 'width'?)")),
            AllOf(StartsWith("spec.yaml:4:36: components[1].input: component 'time': "),
                  HasSubstr("got 'epoch_sec' (did you mean 'epoch_s'?)"))));
    EXPECT_THAT(lines_of(e.what()), SizeIs(4));
  }
}

TEST(KeySpecLoader, UnknownTypeSuggestsTheClosestKind) {
  EXPECT_THAT(load_error("components:\n  - {name: ev, type: feild, field: e, width: 4}\n"),
              HasSubstr("components[0].type: component 'ev': unknown component type 'feild' (did you mean 'field'?)"));
}

TEST(KeySpecLoader, SingleProblemKeepsTheOneLineShape) {
  const auto msg = load_error("components:\n  - {type: partition, encoding: binary, width: 8}\n");
  EXPECT_EQ(msg, "spec.yaml:2:48: components[0].width: component 'partition': a binary partition is 4 bytes");
}

TEST(KeySpecLoader, WidthOutOfRange) {
  EXPECT_THAT(load_error("components:\n  - {type: int, field: n, width: 25}\n"),
              AllOf(StartsWith("spec.yaml:2:"), HasSubstr("component 'n': 'width' 25 out of range [1, 19]")));
  EXPECT_THAT(load_error("components:\n  - {type: salt, buckets: 300}\n"),
              HasSubstr("'buckets' 300 out of range [1, 256]"));
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
  EXPECT_THAT(load_error("components:\n  - {type: partition}\n  - {type: salt}\n"),
              HasSubstr("a salt must be the first"));
  EXPECT_THAT(load_error("components:\n  - {type: time, field: t, format: yyyyMMddhh}\n"),
              HasSubstr("unsupported time pattern letter 'h'"));
  EXPECT_THAT(load_error("components:\n  - {type: time, field: t, format: yyyyddMM}\n"), HasSubstr("without gaps"));
  EXPECT_THAT(load_error("components:\n  - {type: time, field: t, reversed: true, format: yyyyMMdd}\n"),
              HasSubstr("reversed time needs format binary or decimal"));
  EXPECT_THAT(load_error("components:\n  - {type: dict, field: e, values: {a: \"1\", b: \"22\"}}\n"),
              HasSubstr("same length"));
  EXPECT_THAT(load_error("components:\n  - {type: salt, random: true, of: [field:x]}\n"),
              HasSubstr("random salt takes no"));
  EXPECT_THAT(load_error("max_key_length: 4\ncomponents:\n  - {type: offset}\n"),
              HasSubstr("more than max_key_length 4"));
  EXPECT_THAT(load_error("max_key_length: 40000\ncomponents:\n  - {type: offset}\n"), HasSubstr("[1, 32767]"));
  EXPECT_THAT(load_error("components:\n  - {type: hash, of: [user]}\n"), HasSubstr("unknown input 'user'"));
  EXPECT_THAT(load_error("components: [\n"), StartsWith("spec.yaml:"));
}

TEST(KeySpecLoader, ImpossiblePlanIsALoadError) {
  const auto msg = load_error(
      "time_component: t\ncomponents:\n  - {name: h, type: hash, of: [kafka:offset]}\n  - {name: t, type: time, field: "
      "ts}\n");
  EXPECT_THAT(
      msg, AllOf(StartsWith("spec.yaml:3:"), HasSubstr("component 'h': impossible plan"), HasSubstr("kafka:offset")));
  // Every component that blocks the plan is named, not only the first.
  EXPECT_THAT(
      lines_of(load_error("time_component: t\ncomponents:\n  - {name: h, type: hash, of: [kafka:offset]}\n"
                          "  - {name: o, type: int, kafka: timestamp}\n  - {name: t, type: time, field: ts}\n")),
      ElementsAre(AllOf(StartsWith("spec.yaml:3:"), HasSubstr("component 'h': impossible plan")),
                  AllOf(StartsWith("spec.yaml:4:"), HasSubstr("component 'o': impossible plan"))));
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
  EXPECT_THAT(
      [] {
        try {
          KeySpec::from_yaml_file("/nonexistent/spec.yaml");
        } catch (const SpecError& e) {
          return std::string(e.what());
        }
        return std::string();
      }(),
      HasSubstr("/nonexistent/spec.yaml"));
}

TEST(KeySpecLoader, DefaultsAndInfo) {
  const auto spec = KeySpec::from_yaml_text(
      "components:\n  - {type: salt}\n  - {type: field, field: event_id, width: 8}\n  - {type: time, field: ts}\n",
      "x");
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
  EXPECT_EQ(KeySpec::preset_names().size(), 9u);
  for (const auto& name : KeySpec::preset_names()) EXPECT_NO_THROW(KeySpec::preset(name)) << name;
}

}  // namespace
}  // namespace hbingest::keyspec
