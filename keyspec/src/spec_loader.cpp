#include "spec_loader.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <set>
#include <utility>
#include <variant>
#include <string>
#include <vector>

#include "component_codec.h"
#include "digest.h"
#include "time_codec.h"

namespace hbingest::keyspec::detail {
namespace {

constexpr std::int64_t kHBaseMaxKey = 32767;
constexpr std::int64_t kMaxBucketValues = 1000000;  // planning enumerates every value
constexpr std::size_t kDefaultMaxLength = 128;

std::string where(std::string_view source, const YAML::Mark& mark) {
  std::string s(source);
  if (!mark.is_null()) s += ":" + std::to_string(mark.line + 1) + ":" + std::to_string(mark.column + 1);
  return s;
}

[[noreturn]] void top_fail(std::string_view source, const YAML::Mark& mark, const std::string& reason) {
  throw SpecError(where(source, mark) + ": " + reason);
}

int digits_for(std::int64_t max_value) {
  int d = 1;
  while (max_value >= 10) {
    max_value /= 10;
    ++d;
  }
  return d;
}

// Reads one component mapping, remembering which keys it consumed so unknown keys are errors.
class ComponentReader {
 public:
  ComponentReader(const YAML::Node& node, std::string_view source, std::string name)
      : node_(node), source_(source), name_(std::move(name)) {}

  [[noreturn]] void fail(const std::string& reason) const { fail_at(node_.Mark(), reason); }
  [[noreturn]] void fail_at(const YAML::Mark& mark, const std::string& reason) const {
    throw SpecError(where(source_, mark) + ": component '" + name_ + "': " + reason);
  }

  YAML::Node get(const std::string& key) {
    used_.insert(key);
    return node_[key];
  }
  bool has(const std::string& key) const { return node_[key].IsDefined(); }

  std::string str(const std::string& key, std::string fallback) {
    const YAML::Node v = get(key);
    if (!v.IsDefined()) return fallback;
    if (!v.IsScalar()) fail_at(v.Mark(), "'" + key + "' must be a string");
    return v.Scalar();
  }
  std::string required_str(const std::string& key) {
    if (!has(key)) fail("'" + key + "' is required for type " + type_);
    return str(key, "");
  }
  std::int64_t integer(const std::string& key, std::int64_t fallback, std::int64_t lo, std::int64_t hi) {
    const YAML::Node v = get(key);
    if (!v.IsDefined()) return fallback;
    std::int64_t n = 0;
    try {
      n = v.as<std::int64_t>();
    } catch (const YAML::Exception&) {
      fail_at(v.Mark(), "'" + key + "' must be an integer, got '" + (v.IsScalar() ? v.Scalar() : "?") + "'");
    }
    if (n < lo || n > hi) {
      fail_at(v.Mark(), "'" + key + "' " + std::to_string(n) + " out of range [" + std::to_string(lo) + ", " +
                            std::to_string(hi) + "]");
    }
    return n;
  }
  bool boolean(const std::string& key, bool fallback) {
    const YAML::Node v = get(key);
    if (!v.IsDefined()) return fallback;
    try {
      return v.as<bool>();
    } catch (const YAML::Exception&) {
      fail_at(v.Mark(), "'" + key + "' must be true or false");
    }
  }
  char byte(const std::string& key, char fallback) {
    const YAML::Node v = get(key);
    if (!v.IsDefined()) return fallback;
    if (!v.IsScalar() || v.Scalar().size() != 1) {
      fail_at(v.Mark(), "'" + key + "' must be exactly one byte, e.g. \"\\x01\"");
    }
    return v.Scalar()[0];
  }
  // One of the allowed words, or the fallback when absent.
  std::string choice(const std::string& key, std::string fallback, std::initializer_list<std::string_view> allowed) {
    const std::string v = str(key, fallback);
    for (const auto a : allowed) {
      if (a == v) return v;
    }
    std::string list;
    for (const auto a : allowed) list.append(list.empty() ? "" : "|").append(a);
    fail_at(get(key).Mark(), "'" + key + "' must be one of " + list + ", got '" + v + "'");
  }

  Source source_string(const std::string& text, const YAML::Mark& mark) const {
    const auto colon = text.find(':');
    const std::string prefix = colon == std::string::npos ? "" : text.substr(0, colon);
    const std::string rest = colon == std::string::npos ? text : text.substr(colon + 1);
    if (prefix == "field") {
      if (rest.empty()) fail_at(mark, "empty field name in '" + text + "'");
      return Source{SourceKind::Field, rest};
    }
    if (prefix.empty() || prefix == "kafka") {
      if (rest == "partition") return Source{SourceKind::Partition, ""};
      if (rest == "offset") return Source{SourceKind::Offset, ""};
      if (rest == "timestamp") return Source{SourceKind::Timestamp, ""};
      if (rest == "topic") return Source{SourceKind::Topic, ""};
    }
    fail_at(mark, "unknown input '" + text +
                      "' (use field:NAME or kafka:partition|offset|timestamp|topic)");
  }

  // `field: NAME` or `kafka: partition|offset|timestamp|topic`; exactly one.
  Source single_source(std::initializer_list<SourceKind> kafka_allowed, bool required = true) {
    const bool f = has("field");
    const bool k = has("kafka");
    if (f && k) fail("give either 'field' or 'kafka', not both");
    if (f) {
      const std::string name = str("field", "");
      if (name.empty()) fail_at(get("field").Mark(), "'field' must not be empty");
      return Source{SourceKind::Field, name};
    }
    if (k) {
      const YAML::Node v = get("kafka");
      const Source s = source_string("kafka:" + str("kafka", ""), v.Mark());
      if (std::find(kafka_allowed.begin(), kafka_allowed.end(), s.kind) == kafka_allowed.end()) {
        fail_at(v.Mark(), "kafka metadata '" + v.Scalar() + "' cannot feed a " + type_ + " component");
      }
      return s;
    }
    if (required) fail("needs an input: 'field: NAME' or 'kafka: ...'");
    return Source{};
  }

  std::vector<Source> source_list(const std::string& key) {
    const YAML::Node v = get(key);
    if (!v.IsSequence() || v.size() == 0) fail_at(v.Mark(), "'" + key + "' must be a non-empty list of inputs");
    std::vector<Source> out;
    for (const auto& item : v) {
      if (!item.IsScalar()) fail_at(item.Mark(), "inputs must be strings like field:user_id or kafka:offset");
      out.push_back(source_string(item.Scalar(), item.Mark()));
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

  void check_unknown_keys() const {
    for (const auto& kv : node_) {
      const std::string key = kv.first.as<std::string>();
      if (used_.count(key) == 0) {
        fail_at(kv.first.Mark(), "unknown key '" + key + "' for type " + type_);
      }
    }
  }

  void set_type(std::string type) { type_ = std::move(type); }
  const std::string& name() const { return name_; }

 private:
  const YAML::Node& node_;
  std::string_view source_;
  std::string name_;
  std::string type_;
  std::set<std::string> used_{"name", "type"};
};

void read_lead_encoding(ComponentReader& r, Component& c, bool& binary, std::int64_t values) {
  binary = r.choice("encoding", "text", {"text", "binary"}) == "binary";
  if (binary) {
    if (r.has("width")) r.fail("'width' applies to text encoding only (binary is one byte)");
    if (values > 256) r.fail(std::to_string(values) + " values do not fit one binary byte");
    c.width = 1;
  } else {
    const int need = digits_for(values - 1);
    c.width = static_cast<std::size_t>(r.integer("width", need, 1, 9));
    if (static_cast<int>(c.width) < need) {
      r.fail_at(r.get("width").Mark(), "width " + std::to_string(c.width) + " cannot hold " +
                                           std::to_string(values) + " values (needs " + std::to_string(need) + ")");
    }
  }
}

void read_int_like(ComponentReader& r, Component& c, bool& binary, std::int64_t text_default,
                   std::int64_t text_max_width, std::int64_t binary_width) {
  binary = r.choice("encoding", "text", {"text", "binary"}) == "binary";
  if (binary) {
    const std::int64_t w = r.integer("width", binary_width, 4, 8);
    if (w != 4 && w != 8) r.fail_at(r.get("width").Mark(), "binary width must be 4 or 8 bytes");
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
    if (r.has("of") || r.has("month_of")) r.fail("a random salt takes no 'of' or 'month_of' inputs");
    warnings.push_back("component '" + c.name +
                       "': random salt: a replayed Kafka message gets another bucket, so replays duplicate rows");
  } else {
    s.inputs = r.has("of") ? r.source_list("of")
                           : std::vector<Source>{{SourceKind::Partition, ""}, {SourceKind::Offset, ""}};
  }
  if (r.has("month_of")) {
    const YAML::Node v = r.get("month_of");
    if (!v.IsScalar()) r.fail_at(v.Mark(), "'month_of' must be an input like field:ts");
    s.month_of = r.source_string(v.Scalar(), v.Mark());
    s.time_input = r.time_input("input");
  }
  read_lead_encoding(r, c, s.binary, s.lead_values());
}

void read_kind(ComponentReader& r, Component& c, FieldSpec& f, std::vector<std::string>&) {
  f.source = r.single_source({SourceKind::Topic});
  const bool fixed = r.has("width");
  const bool delimited = r.has("terminator");
  if (fixed == delimited) r.fail("give exactly one of 'width' (fixed, padded) or 'terminator' (variable)");
  if (fixed) {
    c.width = static_cast<std::size_t>(r.integer("width", 0, 1, kHBaseMaxKey));
    f.pad = r.byte("pad", '\x01');
    f.align_right = r.choice("align", "left", {"left", "right"}) == "right";
    f.max_length = c.width;
    if (r.has("max_length")) r.fail("'max_length' applies to terminator fields; a fixed field's limit is its width");
  } else {
    f.terminator = r.byte("terminator", '\0');
    f.max_length = static_cast<std::size_t>(r.integer("max_length", kDefaultMaxLength, 1, kHBaseMaxKey - 1));
    if (r.has("pad") || r.has("align")) r.fail("'pad'/'align' apply to fixed-width fields only");
  }
}

void read_kind(ComponentReader& r, Component& c, HashSpec& h, std::vector<std::string>&) {
  if (r.has("of") == r.has("field")) r.fail("give exactly one of 'field: NAME' or 'of: [inputs]'");
  h.inputs = r.has("of") ? r.source_list("of") : std::vector<Source>{r.single_source({})};
  const std::string algo = r.choice("algorithm", "md5", {"md5", "sha1", "xxh64"});
  h.algo = algo == "sha1" ? HashAlgo::Sha1 : algo == "xxh64" ? HashAlgo::Xxh64 : HashAlgo::Md5;
  const auto full = static_cast<std::int64_t>(digest_size(h.algo));
  c.width = static_cast<std::size_t>(r.integer("bytes", full, 1, full));
  if (h.algo != HashAlgo::Xxh64) {
    try {
      h.md = fetch_digest(h.algo);
    } catch (const std::runtime_error& e) {
      r.fail(e.what());
    }
  }
}

void read_kind(ComponentReader& r, Component& c, ReverseSpec& s, std::vector<std::string>&) {
  s.source = r.single_source({});
  if (!r.has("width")) r.fail("'width' is required: only a fixed-width value can be reversed");
  c.width = static_cast<std::size_t>(r.integer("width", 0, 1, kHBaseMaxKey));
  s.pad = r.byte("pad", '\x01');
}

void read_kind(ComponentReader& r, Component& c, TimeSpec& t, std::vector<std::string>&) {
  t.source = r.single_source({SourceKind::Timestamp});
  t.input = r.time_input("input");
  t.reversed = r.boolean("reversed", false);
  const YAML::Node fmt = r.get("format");
  const std::string format = r.str("format", t.reversed ? "binary" : "yyyyMMddHHmmssSSS");
  if (format == "binary") {
    t.format = TimeFormat::Binary;
    c.width = 8;
  } else if (format == "decimal") {
    t.format = TimeFormat::Decimal;
    c.width = 19;
  } else {
    if (t.reversed) {
      r.fail_at(fmt.Mark(), "reversed time needs format binary or decimal (Long.MAX_VALUE - ms), not a date pattern");
    }
    bool full = false;
    if (const auto err = parse_time_pattern(format, t.pattern, full); !err.empty()) r.fail_at(fmt.Mark(), err);
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
  if (!r.has("buckets")) r.fail("'buckets' is required");
  b.buckets = r.integer("buckets", 0, 1, kMaxBucketValues);
  if (r.has("input")) b.as_time = r.time_input("input");
  read_lead_encoding(r, c, b.binary, b.lead_values());
}

void read_kind(ComponentReader& r, Component& c, DictSpec& d, std::vector<std::string>&) {
  d.source = r.single_source({SourceKind::Topic});
  const YAML::Node values = r.get("values");
  if (!values.IsMap() || values.size() == 0) r.fail("'values' must be a non-empty mapping value → code");
  std::set<std::string> codes;
  for (const auto& kv : values) {
    if (!kv.second.IsScalar() || kv.second.Scalar().empty()) r.fail_at(kv.second.Mark(), "dict codes must be non-empty strings");
    const std::string code = kv.second.Scalar();
    if (c.width == 0) c.width = code.size();
    if (code.size() != c.width) {
      r.fail_at(kv.second.Mark(), "dict code '" + code + "' must have the same length as the others (" +
                                      std::to_string(c.width) + ")");
    }
    if (!codes.insert(code).second) r.fail_at(kv.second.Mark(), "dict code '" + code + "' is used twice");
    d.codes.emplace_back(kv.first.as<std::string>(), code);
  }
}

void read_kind(ComponentReader& r, Component& c, LiteralSpec& l, std::vector<std::string>&) {
  l.value = r.str("value", "");
  if (l.value.empty()) r.fail("'value' must be a non-empty string");
  c.width = l.value.size();
}

void read_kind(ComponentReader& r, Component& c, PartitionSpec& p, std::vector<std::string>&) {
  read_int_like(r, c, p.binary, 4, 10, 4);
  if (p.binary && c.width != 4) r.fail("a binary partition is 4 bytes");
}

void read_kind(ComponentReader& r, Component& c, OffsetSpec& o, std::vector<std::string>&) {
  read_int_like(r, c, o.binary, 19, 19, 8);
  if (o.binary && c.width != 8) r.fail("a binary offset is 8 bytes");
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

// "salt, field, hash, ..." in declaration order.
std::string kind_names() {
  return []<std::size_t... I>(std::index_sequence<I...>) {
    std::string s;
    ((s += (I == 0 ? "" : ", ") + std::string(std::variant_alternative_t<I, Shape>::kName)), ...);
    return s;
  }(std::make_index_sequence<std::variant_size_v<Shape>>{});
}

Component read_component(const YAML::Node& node, std::size_t index, std::string_view source,
                         std::vector<std::string>& warnings) {
  std::string fallback_name = "#" + std::to_string(index + 1);
  if (!node.IsMap()) top_fail(source, node.Mark(), "component " + fallback_name + ": must be a mapping");
  const YAML::Node name_node = node["name"];
  const YAML::Node type_node = node["type"];
  const YAML::Node field_node = node["field"];
  std::string type = type_node.IsDefined() && type_node.IsScalar() ? type_node.Scalar() : "";
  std::string name;
  if (name_node.IsDefined()) {
    if (!name_node.IsScalar() || name_node.Scalar().empty()) {
      top_fail(source, name_node.Mark(), "component " + fallback_name + ": 'name' must be a non-empty string");
    }
    name = name_node.Scalar();
  } else if ((type == "field" || type == "dict" || type == "reverse" || type == "int") && field_node.IsDefined() &&
             field_node.IsScalar()) {
    name = field_node.Scalar();
  } else {
    name = type.empty() ? fallback_name : type;
  }
  ComponentReader r(node, source, name);
  if (type.empty()) r.fail("'type' is required (" + kind_names() + ")");
  r.set_type(type);
  Component c;
  c.name = name;
  if (!read_shape(type, r, c, warnings)) {
    r.fail_at(type_node.Mark(), "unknown component type '" + type + "' (" + kind_names() + ")");
  }
  r.check_unknown_keys();
  return c;
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
        return std::all_of(h.inputs.begin(), h.inputs.end(), [](const Source& s) { return s.kind == SourceKind::Field; });
      },
      [](const OffsetSpec&) { return false; },
      [&](const OneOf<FieldSpec, ReverseSpec, TimeSpec, IntSpec, BucketSpec, DictSpec> auto& k) {
        return fixable(k.source);
      },
      [](const OneOf<SaltSpec, LiteralSpec, PartitionSpec> auto&) { return true; });
}

std::optional<std::size_t> find_component(const SpecModel& m, const std::string& name) {
  for (std::size_t i = 0; i < m.components.size(); ++i) {
    if (m.components[i].name == name) return i;
  }
  return std::nullopt;
}

}  // namespace

SpecModel load_spec(const YAML::Node& root, std::string_view source_name) {
  try {
    SpecModel m;
    m.source_name = std::string(source_name);
    if (!root.IsMap()) top_fail(source_name, root.Mark(), "a key spec must be a mapping with 'components'");
    static const std::set<std::string> kTopKeys{"name", "max_key_length", "event_component", "time_component",
                                                "components"};
    for (const auto& kv : root) {
      const std::string key = kv.first.as<std::string>();
      if (kTopKeys.count(key) == 0) top_fail(source_name, kv.first.Mark(), "unknown key '" + key + "' in key spec");
    }
    if (const YAML::Node n = root["name"]; n.IsDefined()) m.name = n.as<std::string>();
    if (const YAML::Node n = root["max_key_length"]; n.IsDefined()) {
      std::int64_t v = 0;
      try {
        v = n.as<std::int64_t>();
      } catch (const YAML::Exception&) {
        top_fail(source_name, n.Mark(), "'max_key_length' must be an integer");
      }
      if (v < 1 || v > kHBaseMaxKey) {
        top_fail(source_name, n.Mark(), "'max_key_length' " + std::to_string(v) + " out of range [1, 32767] (HBase's limit)");
      }
      m.max_key_length = static_cast<std::size_t>(v);
    }
    const YAML::Node comps = root["components"];
    if (!comps.IsDefined() || !comps.IsSequence() || comps.size() == 0) {
      top_fail(source_name, comps.IsDefined() ? comps.Mark() : root.Mark(), "'components' must be a non-empty list");
    }
    std::vector<YAML::Mark> marks;
    std::size_t index = 0;
    for (const auto& node : comps) {
      Component c = read_component(node, index, source_name, m.warnings);
      const auto fail_here = [&](const std::string& reason) {
        throw SpecError(where(source_name, node.Mark()) + ": component '" + c.name + "': " + reason);
      };
      if (find_component(m, c.name)) fail_here("duplicate component name (give each a distinct 'name')");
      if (c.is<SaltSpec>() && index != 0) fail_here("a salt must be the first component (it spreads the whole key)");
      m.components.push_back(std::move(c));
      marks.push_back(node.Mark());
      ++index;
    }
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
      top_fail(source_name, comps.Mark(), "components need at least " + std::to_string(fixed) +
                                              " bytes, more than max_key_length " + std::to_string(m.max_key_length));
    }
    m.has_lead = m.components[0].is<SaltSpec>() || m.components[0].is<BucketSpec>();

    if (const YAML::Node n = root["event_component"]; n.IsDefined()) {
      const auto i = find_component(m, n.as<std::string>());
      if (!i) top_fail(source_name, n.Mark(), "event_component '" + n.as<std::string>() + "' is not a component");
      if (!m.components[*i].is<FieldSpec>() && !m.components[*i].is<DictSpec>()) {
        top_fail(source_name, n.Mark(), "event_component '" + n.as<std::string>() + "' must be a field or dict component");
      }
      m.event_index = i;
    } else {
      for (std::size_t i = 0; i < m.components.size() && !m.event_index; ++i) {
        if (m.components[i].is<FieldSpec>() || m.components[i].is<DictSpec>()) m.event_index = i;
      }
    }

    if (const YAML::Node n = root["time_component"]; n.IsDefined()) {
      const std::string name = n.as<std::string>();
      const auto i = find_component(m, name);
      if (!i) top_fail(source_name, n.Mark(), "time_component '" + name + "' is not a component");
      if (!plannable_time(m.components[*i])) {
        top_fail(source_name, marks[*i], "component '" + name +
                                             "': cannot be the time component: it is not a time with millisecond "
                                             "resolution (binary, decimal or a yyyy..SSS pattern)");
      }
      m.time_index = i;
      // A range on the time component needs every component before it to be fixable by a query.
      for (std::size_t j = m.has_lead ? 1 : 0; j < *i; ++j) {
        const Component& c = m.components[j];
        if (!query_can_fix(c)) {
          top_fail(source_name, marks[j], "component '" + c.name + "': impossible plan: it precedes time component '" +
                                              name + "' and reads " + m.infos[j].source +
                                              ", which a query cannot fix, so time ranges cannot be scanned");
        }
      }
    } else {
      for (std::size_t i = 0; i < m.components.size() && !m.time_index; ++i) {
        if (plannable_time(m.components[i])) m.time_index = i;
      }
    }
    return m;
  } catch (const YAML::Exception& e) {
    throw SpecError(where(source_name, e.mark) + ": " + e.msg);
  }
}

SpecModel load_spec_text(std::string_view yaml, std::string_view source_name) {
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    throw SpecError(where(source_name, e.mark) + ": YAML: " + e.msg);
  }
  return load_spec(root, source_name);
}

}  // namespace hbingest::keyspec::detail
