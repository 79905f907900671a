#include "spec_loader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <set>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "component_codec.h"
#include "digest.h"
#include "hbingest/support/did_you_mean.h"
#include "spec_problems.h"
#include "time_codec.h"

namespace hbingest::keyspec::detail {
namespace {

using support::did_you_mean;

constexpr std::int64_t kHBaseMaxKey = 32767;
constexpr std::int64_t kMaxBucketValues = 1000000;  // planning enumerates every value
constexpr std::size_t kDefaultMaxLength = 128;

int digits_for(std::int64_t max_value) {
  int d = 1;
  while (max_value >= 10) {
    max_value /= 10;
    ++d;
  }
  return d;
}

// A mapping key as text; complex (non-scalar) keys are never valid here, "?" names them.
std::string key_text(const YAML::Node& key) { return key.IsScalar() ? key.Scalar() : std::string("?"); }

// "salt, field, hash, ..." in declaration order, from each kind's kName.
std::vector<std::string> kind_names() {
  return []<std::size_t... I>(std::index_sequence<I...>) {
    return std::vector<std::string>{std::string(std::variant_alternative_t<I, Shape>::kName)...};
  }
  (std::make_index_sequence<std::variant_size_v<Shape>>{});
}

std::string join(const std::vector<std::string>& words, std::string_view separator) {
  std::string s;
  for (const auto& w : words) s.append(s.empty() ? "" : separator).append(w);
  return s;
}

// Reads one component mapping. A bad value is recorded as a problem and the reader goes on with a
// fallback, so one load reports every problem of the component. It remembers which keys it
// consumed so that the rest are reported as unknown.
class ComponentReader {
 public:
  ComponentReader(const YAML::Node& node, SpecProblems& problems, std::string path, std::string name, std::string type)
      : node_(node), problems_(problems), path_(std::move(path)), name_(std::move(name)), type_(std::move(type)) {}

  // A problem of the component as a whole, at its mapping.
  void problem(const std::string& reason) { problems_.add(node_.Mark(), path_, prefix() + reason); }
  // A problem of one key (`key` may go deeper: "of[1]", "values.login"), at `mark`.
  void problem_at(const YAML::Mark& mark, std::string_view key, const std::string& reason) {
    problems_.add(mark, path_ + "." + std::string(key), prefix() + reason);
  }
  // A required key that is absent: reported at the component, with the key's path.
  void missing(std::string_view key, const std::string& reason) { problem_at(node_.Mark(), key, reason); }

  YAML::Node get(const std::string& key) {
    used_.insert(key);
    return node_[key];
  }
  bool has(const std::string& key) {
    probed_.insert(key);
    return node_[key].IsDefined();
  }
  // Marks keys as consumed without reading them, after a problem that makes them meaningless.
  void consume(std::initializer_list<const char*> keys) { used_.insert(keys.begin(), keys.end()); }
  YAML::Mark mark_of(const std::string& key) const {
    const YAML::Node v = node_[key];
    return v.IsDefined() ? v.Mark() : node_.Mark();
  }

  std::string str(const std::string& key, std::string fallback) {
    const YAML::Node v = get(key);
    if (!v.IsDefined()) return fallback;
    if (!v.IsScalar()) {
      problem_at(v.Mark(), key, "'" + key + "' must be a string");
      return fallback;
    }
    return v.Scalar();
  }
  std::int64_t integer(const std::string& key, std::int64_t fallback, std::int64_t lo, std::int64_t hi) {
    const YAML::Node v = get(key);
    if (!v.IsDefined()) return fallback;
    std::int64_t n = 0;
    try {
      n = v.as<std::int64_t>();
    } catch (const YAML::Exception&) {
      problem_at(v.Mark(), key, "'" + key + "' must be an integer, got '" + (v.IsScalar() ? v.Scalar() : "?") + "'");
      return fallback;
    }
    if (n < lo || n > hi) {
      problem_at(v.Mark(), key,
                 "'" + key + "' " + std::to_string(n) + " out of range [" + std::to_string(lo) + ", " +
                     std::to_string(hi) + "]");
      return fallback;
    }
    return n;
  }
  bool boolean(const std::string& key, bool fallback) {
    const YAML::Node v = get(key);
    if (!v.IsDefined()) return fallback;
    try {
      return v.as<bool>();
    } catch (const YAML::Exception&) {
      problem_at(v.Mark(), key, "'" + key + "' must be true or false");
      return fallback;
    }
  }
  char byte(const std::string& key, char fallback) {
    const YAML::Node v = get(key);
    if (!v.IsDefined()) return fallback;
    if (!v.IsScalar() || v.Scalar().size() != 1) {
      problem_at(v.Mark(), key, "'" + key + "' must be exactly one byte, e.g. \"\\x01\"");
      return fallback;
    }
    return v.Scalar()[0];
  }
  // One of the allowed words, or the fallback when absent or wrong.
  std::string choice(const std::string& key, std::string fallback, const std::vector<std::string>& allowed) {
    const YAML::Node v = get(key);
    if (!v.IsDefined()) return fallback;
    const std::string word = str(key, fallback);
    if (!v.IsScalar()) return fallback;
    if (std::find(allowed.begin(), allowed.end(), word) != allowed.end()) return word;
    problem_at(
        v.Mark(), key,
        "'" + key + "' must be one of " + join(allowed, "|") + ", got '" + word + "'" + did_you_mean(word, allowed));
    return fallback;
  }

  // "field:NAME" or "[kafka:]partition|offset|timestamp|topic"; nullopt after a problem.
  std::optional<Source> source_string(const std::string& text, const YAML::Mark& mark, std::string_view key) {
    const auto colon = text.find(':');
    const std::string prefix = colon == std::string::npos ? "" : text.substr(0, colon);
    const std::string rest = colon == std::string::npos ? text : text.substr(colon + 1);
    if (prefix == "field") {
      if (rest.empty()) {
        problem_at(mark, key, "empty field name in '" + text + "'");
        return std::nullopt;
      }
      return Source{SourceKind::Field, rest};
    }
    if (prefix.empty() || prefix == "kafka") {
      if (rest == "partition") return Source{SourceKind::Partition, ""};
      if (rest == "offset") return Source{SourceKind::Offset, ""};
      if (rest == "timestamp") return Source{SourceKind::Timestamp, ""};
      if (rest == "topic") return Source{SourceKind::Topic, ""};
    }
    problem_at(mark, key, "unknown input '" + text + "' (use field:NAME or kafka:partition|offset|timestamp|topic)");
    return std::nullopt;
  }

  // `field: NAME` or `kafka: partition|offset|timestamp|topic`; exactly one. Source{} after a problem.
  Source single_source(std::initializer_list<SourceKind> kafka_allowed, bool required = true) {
    const bool f = has("field");
    const bool k = has("kafka");
    if (f && k) {
      problem("give either 'field' or 'kafka', not both");
      consume({"field", "kafka"});
      return Source{};
    }
    if (f) {
      const std::string name = str("field", "");
      if (name.empty()) {
        problem_at(mark_of("field"), "field", "'field' must not be empty");
        return Source{};
      }
      return Source{SourceKind::Field, name};
    }
    if (k) {
      const YAML::Node v = get("kafka");
      if (!v.IsScalar()) {
        problem_at(v.Mark(), "kafka", "'kafka' must be a string");
        return Source{};
      }
      const auto s = source_string("kafka:" + v.Scalar(), v.Mark(), "kafka");
      if (!s) return Source{};
      if (std::find(kafka_allowed.begin(), kafka_allowed.end(), s->kind) == kafka_allowed.end()) {
        problem_at(v.Mark(), "kafka", "kafka metadata '" + v.Scalar() + "' cannot feed a " + type_ + " component");
        return Source{};
      }
      return *s;
    }
    if (required) problem("needs an input: 'field: NAME' or 'kafka: ...'");
    return Source{};
  }

  std::vector<Source> source_list(const std::string& key) {
    const YAML::Node v = get(key);
    if (!v.IsSequence() || v.size() == 0) {
      problem_at(mark_of(key), key, "'" + key + "' must be a non-empty list of inputs");
      return {};
    }
    std::vector<Source> out;
    std::size_t i = 0;
    for (const auto& item : v) {
      const std::string item_key = key + "[" + std::to_string(i++) + "]";
      if (!item.IsScalar()) {
        problem_at(item.Mark(), item_key, "inputs must be strings like field:user_id or kafka:offset");
        continue;
      }
      if (auto s = source_string(item.Scalar(), item.Mark(), item_key)) out.push_back(std::move(*s));
    }
    return out;
  }

  TimeInput time_input(const std::string& key) {
    const std::string v = choice(key, "auto", {"auto", "epoch_ms", "epoch_s", "rfc3339"});
    if (v == "epoch_ms") return TimeInput::EpochMs;
    if (v == "epoch_s") return TimeInput::EpochS;
    if (v == "rfc3339") return TimeInput::Rfc3339;
    return TimeInput::Auto;
  }

  void check_unknown_keys() {
    std::vector<std::string> known(used_.begin(), used_.end());
    known.insert(known.end(), probed_.begin(), probed_.end());
    for (const auto& kv : node_) {
      const std::string key = key_text(kv.first);
      if (used_.count(key) == 0) {
        problem_at(kv.first.Mark(), key, "unknown key '" + key + "' for type " + type_ + did_you_mean(key, known));
      }
    }
  }

 private:
  std::string prefix() const { return "component '" + name_ + "': "; }

  const YAML::Node& node_;
  SpecProblems& problems_;
  std::string path_;  // "components[2]"
  std::string name_;
  std::string type_;
  std::set<std::string> used_{"name", "type"};
  std::set<std::string> probed_;  // looked for but not consumed: candidates for "did you mean"
};

void read_lead_encoding(ComponentReader& r, Component& c, bool& binary, std::int64_t values) {
  binary = r.choice("encoding", "text", {"text", "binary"}) == "binary";
  if (binary) {
    if (r.has("width")) {
      r.problem_at(r.mark_of("width"), "width", "'width' applies to text encoding only (binary is one byte)");
      r.consume({"width"});
    }
    if (values > 256) r.problem(std::to_string(values) + " values do not fit one binary byte");
    c.width = 1;
  } else {
    const int need = digits_for(values - 1);
    c.width = static_cast<std::size_t>(r.integer("width", need, 1, 9));
    if (static_cast<int>(c.width) < need) {
      r.problem_at(r.mark_of("width"), "width",
                   "width " + std::to_string(c.width) + " cannot hold " + std::to_string(values) + " values (needs " +
                       std::to_string(need) + ")");
    }
  }
}

void read_int_like(ComponentReader& r, Component& c, bool& binary, std::int64_t text_default,
                   std::int64_t text_max_width, std::int64_t binary_width) {
  binary = r.choice("encoding", "text", {"text", "binary"}) == "binary";
  if (binary) {
    const std::int64_t w = r.integer("width", binary_width, 4, 8);
    if (w != 4 && w != 8) r.problem_at(r.mark_of("width"), "width", "binary width must be 4 or 8 bytes");
    c.width = static_cast<std::size_t>(w);
  } else {
    c.width = static_cast<std::size_t>(r.integer("width", text_default, 1, text_max_width));
  }
}

// One read_kind per component kind: reads that kind's keys into its struct and sets c.width.

void read_kind(ComponentReader& r, Component& c, SaltSpec& s, std::vector<std::string>& warnings) {
  s.buckets = r.integer("buckets", 100, 1, 256);
  s.random = r.boolean("random", false);
  if (s.random) {
    if (r.has("of") || r.has("month_of")) {
      r.problem("a random salt takes no 'of' or 'month_of' inputs");
      r.consume({"of", "month_of", "input"});
    }
    warnings.push_back("component '" + c.name +
                       "': random salt: a replayed Kafka message gets another bucket, so replays duplicate rows");
  } else {
    s.inputs =
        r.has("of") ? r.source_list("of") : std::vector<Source>{{SourceKind::Partition, ""}, {SourceKind::Offset, ""}};
    if (r.has("month_of")) {
      const YAML::Node v = r.get("month_of");
      if (!v.IsScalar()) {
        r.problem_at(v.Mark(), "month_of", "'month_of' must be an input like field:ts");
      } else {
        s.month_of = r.source_string(v.Scalar(), v.Mark(), "month_of");
      }
      s.time_input = r.time_input("input");
    }
  }
  read_lead_encoding(r, c, s.binary, s.lead_values());
}

void read_kind(ComponentReader& r, Component& c, FieldSpec& f, std::vector<std::string>&) {
  f.source = r.single_source({SourceKind::Topic});
  const bool fixed = r.has("width");
  const bool delimited = r.has("terminator");
  if (fixed == delimited) {
    r.problem("give exactly one of 'width' (fixed, padded) or 'terminator' (variable)");
    r.consume({"width", "terminator", "pad", "align", "max_length"});
    return;
  }
  if (fixed) {
    c.width = static_cast<std::size_t>(r.integer("width", 0, 1, kHBaseMaxKey));
    f.pad = r.byte("pad", '\x01');
    f.align_right = r.choice("align", "left", {"left", "right"}) == "right";
    f.max_length = c.width;
    if (r.has("max_length")) {
      r.problem_at(r.mark_of("max_length"), "max_length",
                   "'max_length' applies to terminator fields; a fixed field's limit is its width");
      r.consume({"max_length"});
    }
  } else {
    f.terminator = r.byte("terminator", '\0');
    f.max_length = static_cast<std::size_t>(r.integer("max_length", kDefaultMaxLength, 1, kHBaseMaxKey - 1));
    if (r.has("pad") || r.has("align")) {
      r.problem("'pad'/'align' apply to fixed-width fields only");
      r.consume({"pad", "align"});
    }
  }
}

void read_kind(ComponentReader& r, Component& c, HashSpec& h, std::vector<std::string>&) {
  const bool of = r.has("of");
  if (of == r.has("field")) {
    r.problem("give exactly one of 'field: NAME' or 'of: [inputs]'");
    r.consume({"of", "field", "kafka"});
  } else {
    h.inputs = of ? r.source_list("of") : std::vector<Source>{r.single_source({})};
  }
  const std::string algo = r.choice("algorithm", "md5", {"md5", "sha1", "xxh64"});
  h.algo = algo == "sha1" ? HashAlgo::Sha1 : algo == "xxh64" ? HashAlgo::Xxh64 : HashAlgo::Md5;
  const auto full = static_cast<std::int64_t>(digest_size(h.algo));
  c.width = static_cast<std::size_t>(r.integer("bytes", full, 1, full));
  if (h.algo != HashAlgo::Xxh64) {
    try {
      h.md = fetch_digest(h.algo);
    } catch (const std::runtime_error& e) {
      r.problem(e.what());
    }
  }
}

void read_kind(ComponentReader& r, Component& c, ReverseSpec& s, std::vector<std::string>&) {
  s.source = r.single_source({});
  if (!r.has("width")) r.missing("width", "'width' is required: only a fixed-width value can be reversed");
  c.width = static_cast<std::size_t>(r.integer("width", 0, 1, kHBaseMaxKey));
  s.pad = r.byte("pad", '\x01');
}

void read_kind(ComponentReader& r, Component& c, TimeSpec& t, std::vector<std::string>&) {
  t.source = r.single_source({SourceKind::Timestamp});
  t.input = r.time_input("input");
  t.reversed = r.boolean("reversed", false);
  const std::string format = r.str("format", t.reversed ? "binary" : "yyyyMMddHHmmssSSS");
  if (format == "binary") {
    t.format = TimeFormat::Binary;
    c.width = 8;
  } else if (format == "decimal") {
    t.format = TimeFormat::Decimal;
    c.width = 19;
  } else if (t.reversed) {
    r.problem_at(r.mark_of("format"), "format",
                 "reversed time needs format binary or decimal (Long.MAX_VALUE - ms), not a date pattern");
  } else {
    bool full = false;
    if (const auto err = parse_time_pattern(format, t.pattern, full); !err.empty()) {
      r.problem_at(r.mark_of("format"), "format", err);
    }
    t.format = TimeFormat::Pattern;
    t.full_resolution = full;
    c.width = pattern_width(t.pattern);
  }
}

void read_kind(ComponentReader& r, Component& c, IntSpec& i, std::vector<std::string>&) {
  i.source = r.single_source({SourceKind::Partition, SourceKind::Offset, SourceKind::Timestamp});
  i.reversed = r.boolean("reversed", false);
  read_int_like(r, c, i.binary, 19, 19, 8);
}

void read_kind(ComponentReader& r, Component& c, BucketSpec& b, std::vector<std::string>&) {
  b.source = r.single_source({SourceKind::Partition, SourceKind::Offset, SourceKind::Timestamp});
  if (!r.has("buckets")) r.missing("buckets", "'buckets' is required");
  b.buckets = r.integer("buckets", 1, 1, kMaxBucketValues);
  if (r.has("input")) b.as_time = r.time_input("input");
  read_lead_encoding(r, c, b.binary, b.lead_values());
}

void read_kind(ComponentReader& r, Component& c, DictSpec& d, std::vector<std::string>&) {
  d.source = r.single_source({SourceKind::Topic});
  const YAML::Node values = r.get("values");
  if (!values.IsMap() || values.size() == 0) {
    r.problem_at(r.mark_of("values"), "values", "'values' must be a non-empty mapping value → code");
    return;
  }
  std::set<std::string> codes;
  for (const auto& kv : values) {
    const std::string value = key_text(kv.first);
    const std::string path = "values." + value;
    if (!kv.second.IsScalar() || kv.second.Scalar().empty()) {
      r.problem_at(kv.second.Mark(), path, "dict codes must be non-empty strings");
      continue;
    }
    const std::string code = kv.second.Scalar();
    if (c.width == 0) c.width = code.size();
    if (code.size() != c.width) {
      r.problem_at(
          kv.second.Mark(), path,
          "dict code '" + code + "' must have the same length as the others (" + std::to_string(c.width) + ")");
      continue;
    }
    if (!codes.insert(code).second) {
      r.problem_at(kv.second.Mark(), path, "dict code '" + code + "' is used twice");
      continue;
    }
    d.codes.emplace_back(value, code);
  }
}

void read_kind(ComponentReader& r, Component& c, LiteralSpec& l, std::vector<std::string>&) {
  l.value = r.str("value", "");
  if (l.value.empty()) r.problem_at(r.mark_of("value"), "value", "'value' must be a non-empty string");
  c.width = l.value.size();
}

void read_kind(ComponentReader& r, Component& c, PartitionSpec& p, std::vector<std::string>&) {
  read_int_like(r, c, p.binary, 4, 10, 4);
  if (p.binary && c.width != 4) r.problem_at(r.mark_of("width"), "width", "a binary partition is 4 bytes");
}

void read_kind(ComponentReader& r, Component& c, OffsetSpec& o, std::vector<std::string>&) {
  read_int_like(r, c, o.binary, 19, 19, 8);
  if (o.binary && c.width != 8) r.problem_at(r.mark_of("width"), "width", "a binary offset is 8 bytes");
}

// Reads the kind whose kName is `type` into c.shape; false when no kind has that name.
template <std::size_t I = 0>
bool read_shape(std::string_view type, ComponentReader& r, Component& c, std::vector<std::string>& warnings) {
  if constexpr (I == std::variant_size_v<Shape>) {
    return false;
  } else {
    using Kind = std::variant_alternative_t<I, Shape>;
    if (type != Kind::kName) return read_shape<I + 1>(type, r, c, warnings);
    Kind spec;
    read_kind(r, c, spec, warnings);
    c.shape = std::move(spec);
    return true;
  }
}

// A component as read: its name (known even when the rest is broken, for cross-references), and
// the component when its type could be read.
struct ReadComponent {
  std::string name;
  std::optional<Component> component;
};

ReadComponent read_component(const YAML::Node& node, std::size_t index, SpecProblems& problems,
                             std::vector<std::string>& warnings) {
  const std::string path = "components[" + std::to_string(index) + "]";
  const std::string fallback_name = "#" + std::to_string(index + 1);
  if (!node.IsMap()) {
    problems.add(node.Mark(), path, "component " + fallback_name + ": must be a mapping");
    return {fallback_name, std::nullopt};
  }
  const YAML::Node name_node = node["name"];
  const YAML::Node type_node = node["type"];
  const YAML::Node field_node = node["field"];
  const std::string type = type_node.IsDefined() && type_node.IsScalar() ? type_node.Scalar() : "";
  std::string name;
  if (name_node.IsDefined()) {
    if (!name_node.IsScalar() || name_node.Scalar().empty()) {
      problems.add(name_node.Mark(), path + ".name",
                   "component " + fallback_name + ": 'name' must be a non-empty string");
      name = fallback_name;
    } else {
      name = name_node.Scalar();
    }
  } else if ((type == "field" || type == "dict" || type == "reverse" || type == "int") && field_node.IsDefined() &&
             field_node.IsScalar()) {
    name = field_node.Scalar();
  } else {
    name = type.empty() ? fallback_name : type;
  }
  ComponentReader r(node, problems, path, name, type);
  const auto kinds = kind_names();
  if (type.empty()) {
    r.missing("type", "'type' is required (" + join(kinds, ", ") + ")");
    return {name, std::nullopt};
  }
  Component c;
  c.name = name;
  if (!read_shape(type, r, c, warnings)) {
    const std::string suggestion = did_you_mean(type, kinds);
    r.problem_at(
        type_node.Mark(), "type",
        "unknown component type '" + type + "'" + (suggestion.empty() ? " (" + join(kinds, ", ") + ")" : suggestion));
    return {name, std::nullopt};
  }
  r.check_unknown_keys();
  return {name, std::move(c)};
}

ComponentInfo info_of(const Component& c) {
  ComponentInfo info;
  info.name = c.name;
  info.type = std::string(c.kind_name());
  if (c.width > 0) info.width = c.width;
  auto join = [](const std::vector<Source>& inputs) {
    std::string s;
    for (const auto& in : inputs) {
      if (!s.empty()) s += '+';
      s += in.describe();
    }
    return s;
  };
  info.source = visit_kind(
      c,
      [&](const SaltSpec& s) {
        std::string text = s.random ? "random" : join(s.inputs);
        if (s.month_of) text += "+month(" + s.month_of->describe() + ")";
        return text;
      },
      [&](const HashSpec& h) {
        const char* algo = h.algo == HashAlgo::Md5 ? "md5" : h.algo == HashAlgo::Sha1 ? "sha1" : "xxh64";
        return std::string(algo) + "(" + join(h.inputs) + ")";
      },
      [](const LiteralSpec&) { return std::string("literal"); },
      [](const PartitionSpec&) { return std::string("kafka:partition"); },
      [](const OffsetSpec&) { return std::string("kafka:offset"); },
      [](const OneOf<FieldSpec, ReverseSpec, TimeSpec, IntSpec, BucketSpec, DictSpec> auto& k) {
        return k.source.describe();
      });
  const auto add_field = [&](const Source& source) {
    if (source.kind == SourceKind::Field) info.fields.push_back(source.field);
  };
  visit_kind(
      c,
      [&](const SaltSpec& s) {
        for (const auto& in : s.inputs) add_field(in);
        if (s.month_of) add_field(*s.month_of);
      },
      [&](const HashSpec& h) {
        for (const auto& in : h.inputs) add_field(in);
      },
      [](const OneOf<LiteralSpec, PartitionSpec, OffsetSpec> auto&) {},
      [&](const OneOf<FieldSpec, ReverseSpec, TimeSpec, IntSpec, BucketSpec, DictSpec> auto& k) {
        add_field(k.source);
      });
  return info;
}

bool plannable_time(const Component& c) {
  const auto* t = c.as<TimeSpec>();
  return t && t->plannable();
}

// Whether a query's equality values can fix this component's bytes: not when it reads the
// message's offset or Kafka timestamp, nor for a hash of anything but event fields.
bool query_can_fix(const Component& c) {
  const auto fixable = [](const Source& s) { return s.kind != SourceKind::Offset && s.kind != SourceKind::Timestamp; };
  return visit_kind(
      c,
      [](const HashSpec& h) {
        return std::all_of(h.inputs.begin(), h.inputs.end(),
                           [](const Source& s) { return s.kind == SourceKind::Field; });
      },
      [](const OffsetSpec&) { return false; },
      [&](const OneOf<FieldSpec, ReverseSpec, TimeSpec, IntSpec, BucketSpec, DictSpec> auto& k) {
        return fixable(k.source);
      },
      [](const OneOf<SaltSpec, LiteralSpec, PartitionSpec> auto&) { return true; });
}

std::optional<std::size_t> index_of(const std::vector<std::string>& names, const std::string& name) {
  const auto it = std::find(names.begin(), names.end(), name);
  if (it == names.end()) return std::nullopt;
  return static_cast<std::size_t>(it - names.begin());
}

// A component name given at the top level (event_component, time_component); nullopt after a problem.
std::optional<std::size_t> named_component(const YAML::Node& n, const std::string& key,
                                           const std::vector<std::string>& names, SpecProblems& problems) {
  if (!n.IsScalar()) {
    problems.add(n.Mark(), key, "'" + key + "' must be a component name");
    return std::nullopt;
  }
  const auto i = index_of(names, n.Scalar());
  if (!i)
    problems.add(n.Mark(), key, key + " '" + n.Scalar() + "' is not a component" + did_you_mean(n.Scalar(), names));
  return i;
}

std::string component_path(std::size_t i) { return "components[" + std::to_string(i) + "]"; }

// Reads the whole spec, recording every problem. Checks that need every component to be sound
// (widths, the time component's plan, the event component's kind) run only when all are; a
// cascade of follow-on problems from one typo would bury it.
SpecModel read_spec(const YAML::Node& root, SpecProblems& problems) {
  SpecModel m;
  m.source_name = problems.source();
  if (!root.IsMap()) {
    problems.add(root.Mark(), "", "a key spec must be a mapping with 'components'");
    return m;
  }
  static const std::vector<std::string> kTopKeys{"name", "max_key_length", "event_component", "time_component",
                                                 "components"};
  for (const auto& kv : root) {
    const std::string key = key_text(kv.first);
    if (std::find(kTopKeys.begin(), kTopKeys.end(), key) == kTopKeys.end()) {
      problems.add(kv.first.Mark(), key, "unknown key '" + key + "' in key spec" + did_you_mean(key, kTopKeys));
    }
  }
  if (const YAML::Node n = root["name"]; n.IsDefined()) {
    if (n.IsScalar()) {
      m.name = n.Scalar();
    } else {
      problems.add(n.Mark(), "name", "'name' must be a string");
    }
  }
  if (const YAML::Node n = root["max_key_length"]; n.IsDefined()) {
    std::int64_t v = 0;
    try {
      v = n.as<std::int64_t>();
      if (v < 1 || v > kHBaseMaxKey) {
        problems.add(n.Mark(), "max_key_length",
                     "'max_key_length' " + std::to_string(v) + " out of range [1, 32767] (HBase's limit)");
      } else {
        m.max_key_length = static_cast<std::size_t>(v);
      }
    } catch (const YAML::Exception&) {
      problems.add(n.Mark(), "max_key_length", "'max_key_length' must be an integer");
    }
  }
  const YAML::Node comps = root["components"];
  if (!comps.IsDefined() || !comps.IsSequence() || comps.size() == 0) {
    problems.add(comps.IsDefined() ? comps.Mark() : root.Mark(), "components", "'components' must be a non-empty list");
    return m;
  }

  std::vector<std::string> names;
  std::vector<YAML::Mark> marks;
  bool sound = true;  // every component read without a problem: m.components[i] is names[i]
  std::size_t index = 0;
  for (const auto& node : comps) {
    const std::size_t before = problems.size();
    auto [name, c] = read_component(node, index, problems, m.warnings);
    const std::string path = component_path(index);
    if (index_of(names, name)) {
      problems.add(node.Mark(), path,
                   "component '" + name + "': duplicate component name (give each a distinct 'name')");
    }
    if (c && c->is<SaltSpec>() && index != 0) {
      problems.add(node.Mark(), path,
                   "component '" + name + "': a salt must be the first component (it spreads the whole key)");
    }
    names.push_back(name);
    marks.push_back(node.Mark());
    if (c && problems.size() == before) {
      m.components.push_back(std::move(*c));
    } else {
      sound = false;
    }
    ++index;
  }

  if (sound) {
    // Fixed offsets let sort_key() jump straight to its components.
    std::size_t fixed = 0;
    bool all_fixed = true;
    for (std::size_t i = 0; i < m.components.size(); ++i) {
      const Component& c = m.components[i];
      m.infos.push_back(info_of(c));
      m.fixed_offset.push_back(all_fixed ? std::optional<std::size_t>(fixed) : std::nullopt);
      if (c.width == 0) all_fixed = false;
      fixed += c.width == 0 ? 1 : c.width;  // a terminator field takes at least its terminator
      if (c.is<PartitionSpec>() && !m.partition_index) m.partition_index = i;
      if (c.is<OffsetSpec>() && !m.offset_index) m.offset_index = i;
    }
    if (fixed > m.max_key_length) {
      problems.add(comps.Mark(), "components",
                   "components need at least " + std::to_string(fixed) + " bytes, more than max_key_length " +
                       std::to_string(m.max_key_length));
    }
    m.has_lead = m.components[0].is<SaltSpec>() || m.components[0].is<BucketSpec>();
  }

  if (const YAML::Node n = root["event_component"]; n.IsDefined()) {
    const auto i = named_component(n, "event_component", names, problems);
    if (i && sound) {
      if (!m.components[*i].is<FieldSpec>() && !m.components[*i].is<DictSpec>()) {
        problems.add(n.Mark(), "event_component",
                     "event_component '" + names[*i] + "' must be a field or dict component");
      } else {
        m.event_index = i;
      }
    }
  } else if (sound) {
    for (std::size_t i = 0; i < m.components.size() && !m.event_index; ++i) {
      if (m.components[i].is<FieldSpec>() || m.components[i].is<DictSpec>()) m.event_index = i;
    }
  }

  if (const YAML::Node n = root["time_component"]; n.IsDefined()) {
    const auto i = named_component(n, "time_component", names, problems);
    if (i && sound) {
      const std::string& name = names[*i];
      if (!plannable_time(m.components[*i])) {
        problems.add(marks[*i], component_path(*i),
                     "component '" + name +
                         "': cannot be the time component: it is not a time with millisecond resolution (binary, "
                         "decimal or a yyyy..SSS pattern)");
      } else {
        m.time_index = i;
        // A range on the time component needs every component before it to be fixable by a query.
        for (std::size_t j = m.has_lead ? 1 : 0; j < *i; ++j) {
          if (!query_can_fix(m.components[j])) {
            problems.add(marks[j], component_path(j),
                         "component '" + names[j] + "': impossible plan: it precedes time component '" + name +
                             "' and reads " + m.infos[j].source +
                             ", which a query cannot fix, so time ranges cannot be scanned");
          }
        }
      }
    }
  } else if (sound) {
    for (std::size_t i = 0; i < m.components.size() && !m.time_index; ++i) {
      if (plannable_time(m.components[i])) m.time_index = i;
    }
  }
  return m;
}

}  // namespace

SpecModel load_spec(const YAML::Node& root, std::string_view source_name) {
  SpecProblems problems(source_name);
  try {
    SpecModel m = read_spec(root, problems);
    if (!problems.empty()) problems.raise();
    return m;
  } catch (const YAML::Exception& e) {
    // A conversion the checks above did not foresee: report it along with what was found so far.
    problems.add(e.mark, "", e.msg);
    problems.raise();
  }
}

SpecModel load_spec_text(std::string_view yaml, std::string_view source_name) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    SpecProblems problems(source_name);
    problems.add(e.mark, "", "YAML: " + e.msg);
    problems.raise();
  }
  return load_spec(root, source_name);
}

}  // namespace hbingest::keyspec::detail
