#include "scan_planner.h"

#include <algorithm>
#include <set>

#include "component_codec.h"
#include "time_codec.h"

namespace hbingest::keyspec::detail {
namespace {

[[noreturn]] void plan_fail(const SpecModel& m, const std::string& reason) {
  throw SpecError(m.source_name + ": plan: " + reason);
}

std::optional<std::size_t> index_of(const SpecModel& m, std::string_view name) {
  for (std::size_t i = 0; i < m.components.size(); ++i) {
    if (m.components[i].name == name) return i;
  }
  return std::nullopt;
}

bool reads_field(const Component& c, std::string_view field) {
  const auto is = [&](const Source& s) { return s.kind == SourceKind::Field && s.field == field; };
  const auto any = [&](const std::vector<Source>& inputs) { return std::any_of(inputs.begin(), inputs.end(), is); };
  return visit_kind(
      c, [&](const SaltSpec& s) { return any(s.inputs) || (s.month_of && is(*s.month_of)); },
      [&](const HashSpec& h) { return any(h.inputs); },
      [&](const OneOf<FieldSpec, ReverseSpec, TimeSpec, IntSpec, BucketSpec, DictSpec> auto& k) {
        return is(k.source);
      },
      [](const OneOf<LiteralSpec, PartitionSpec, OffsetSpec> auto&) { return false; });
}

// True when every input is an event field the request gives a value for.
bool inputs_known(const std::vector<Source>& inputs, const MapEventFields& event) {
  return !inputs.empty() && std::all_of(inputs.begin(), inputs.end(), [&](const Source& s) {
    return s.kind == SourceKind::Field && event.field(s.field).has_value();
  });
}

std::int64_t parse_index(const SpecModel& m, const Component& c, const std::string& text) {
  std::int64_t v = 0;
  const std::int64_t values = lead_values(c);
  if (!read_int(FieldValue{std::string_view(text)}, v) || v < 0 || v >= values) {
    plan_fail(m, "equality value '" + text + "' for " + std::string(c.kind_name()) + " '" + c.name +
                     "' must be an index in [0, " + std::to_string(values) + ")");
  }
  return v;
}

// A time equality is either the text exactly as the pattern writes it ("2021-12") or an instant
// (epoch ms/s, RFC 3339) encoded the usual way.
void append_time_equality(const SpecModel& m, const Component& c, const TimeSpec& t, const std::string& text,
                          std::string& out) {
  if (t.format == TimeFormat::Pattern) {
    CivilFields civil;
    if (parse_pattern_text(t.pattern, text, civil)) {
      out.append(text);
      return;
    }
  }
  std::int64_t ms = 0;
  if (const auto why = read_time_ms(FieldValue{std::string_view(text)}, TimeInput::Auto, ms); !why.empty()) {
    plan_fail(m, "equality value '" + text + "' for time component '" + c.name + "': " + std::string(why));
  }
  if (const auto why = append_time(t, ms, out); !why.empty()) {
    plan_fail(m, "equality value '" + text + "' for time component '" + c.name + "': " + std::string(why));
  }
}

// Month 1..12 for a month salt, from an equality on its time field or on a time component that
// reads the same field and prints the month; 0 when unknown.
int known_month(const SpecModel& m, const SaltSpec& salt, const PlanRequest& req, const MapEventFields& event) {
  std::int64_t ms = 0;
  if (salt.month_of->kind == SourceKind::Field) {
    if (const auto v = event.field(salt.month_of->field)) {
      if (read_time_ms(*v, salt.time_input, ms).empty()) return utc_month(ms);
    }
  }
  for (const auto& c : m.components) {
    const auto* t = c.as<TimeSpec>();
    if (!t || !(t->source == *salt.month_of)) continue;
    const auto it = req.equals.find(c.name);
    if (it == req.equals.end()) continue;
    CivilFields civil;
    if (t->format == TimeFormat::Pattern && parse_pattern_text(t->pattern, it->second, civil) && civil.month > 0) {
      return civil.month;
    }
    if (read_time_ms(FieldValue{std::string_view(it->second)}, TimeInput::Auto, ms).empty()) return utc_month(ms);
  }
  return 0;
}

std::string lead_bytes(const Component& c, std::int64_t value) {
  std::string s;
  append_lead(c, value, s);
  return s;
}

// What the equality values of a request turned into: an event and Kafka metadata for the
// ordinary encoder, and which request keys named components versus raw event fields.
struct Equalities {
  MapEventFields event;
  KafkaMeta meta;
  std::set<std::string, std::less<>> component_keys;
  std::set<std::string, std::less<>> field_keys;
};

// The bytes every planned key shares after the lead, and where they stop.
struct LeadingRun {
  std::string prefix;
  std::size_t range_at = 0;                 // first component without an equality value (components.size() if none)
  std::set<std::string, std::less<>> used;  // component names the run consumed
};

std::int64_t parse_equality_int(const SpecModel& m, const std::string& key, const std::string& value,
                                std::string_view what) {
  std::int64_t n = 0;
  if (!read_int(FieldValue{std::string_view(value)}, n)) {
    plan_fail(m, "equality value '" + value + "' for '" + key + "' must be " + std::string(what));
  }
  return n;
}

// An inverted range is a caller bug; say so instead of planning nothing.
void check_time_range(const SpecModel& m, const PlanRequest& req) {
  if (req.from_ms && req.to_ms && *req.from_ms >= *req.to_ms) {
    plan_fail(m, "empty time range [" + std::to_string(*req.from_ms) + ", " + std::to_string(*req.to_ms) + ")");
  }
}

// Equality values become an event (and Kafka metadata) that the ordinary encoder turns into bytes,
// so a planned prefix is byte-for-byte what encode() writes.
Equalities feed_equalities(const SpecModel& m, const PlanRequest& req) {
  Equalities eq;
  eq.meta.offset = -1;
  for (const auto& entry : req.equals) {
    // Named, not a structured binding: clang 14 cannot capture bindings in the lambda below.
    const std::string& key = entry.first;
    const std::string& value = entry.second;
    const auto idx = index_of(m, key);
    if (!idx) {
      const bool read = std::any_of(m.components.begin(), m.components.end(),
                                    [&](const Component& c) { return reads_field(c, key); });
      if (!read) plan_fail(m, "equality on '" + key + "': no component or event field of that name");
      eq.event.set(key, value);
      eq.field_keys.insert(key);
      continue;
    }
    eq.component_keys.insert(key);
    const auto set_partition = [&] {
      eq.meta.partition = static_cast<std::int32_t>(parse_equality_int(m, key, value, "an integer"));
    };
    const auto set_offset = [&] { eq.meta.offset = parse_equality_int(m, key, value, "an integer"); };
    visit_kind(
        m.components[*idx], [&](const PartitionSpec&) { set_partition(); }, [&](const OffsetSpec&) { set_offset(); },
        [&](const HashSpec& h) {
          if (h.inputs.size() != 1 || h.inputs[0].kind != SourceKind::Field) {
            plan_fail(m, "equality on hash '" + key + "' of " + m.infos[*idx].source +
                             ": give each input field by its own name instead");
          }
          eq.event.set(h.inputs[0].field, value);
        },
        [&](const OneOf<FieldSpec, DictSpec, ReverseSpec, IntSpec> auto& k) {
          switch (k.source.kind) {
            case SourceKind::Field:
              eq.event.set(k.source.field, value);
              break;
            case SourceKind::Partition:
              set_partition();
              break;
            case SourceKind::Offset:
              set_offset();
              break;
            case SourceKind::Timestamp:
              eq.meta.timestamp_ms = parse_equality_int(m, key, value, "epoch ms");
              break;
            case SourceKind::Topic:
              plan_fail(m, "equality on '" + key + "', which reads kafka:topic, is not supported");
            case SourceKind::None:
              break;
          }
        },
        // Their equality values are encoded where the leading run reaches them.
        [](const OneOf<SaltSpec, BucketSpec, TimeSpec, LiteralSpec> auto&) {});
  }
  return eq;
}

// Encodes the components after the lead for as long as the request fixes them: every key the
// query can match starts with these bytes. Literals are free; a hash counts as fixed when all its
// input fields are given.
LeadingRun encode_leading_run(const SpecModel& m, const PlanRequest& req, const Equalities& eq) {
  LeadingRun run;
  std::size_t i = m.has_lead ? 1 : 0;
  for (; i < m.components.size(); ++i) {
    const Component& c = m.components[i];
    const auto value = req.equals.find(c.name);
    if (const auto* literal = c.as<LiteralSpec>()) {
      if (value != req.equals.end() && value->second != literal->value) {
        plan_fail(m, "equality on literal '" + c.name + "' differs from its fixed value");
      }
      run.prefix.append(literal->value);
      run.used.insert(c.name);
      continue;
    }
    const auto* hash = c.as<HashSpec>();
    const bool given = value != req.equals.end() || (hash && inputs_known(hash->inputs, eq.event));
    if (!given) break;
    run.used.insert(c.name);
    visit_kind(
        c, [&](const TimeSpec& t) { append_time_equality(m, c, t, value->second, run.prefix); },
        [&](const OneOf<SaltSpec, BucketSpec> auto&) { append_lead(c, parse_index(m, c, value->second), run.prefix); },
        // The rest encode the event built from the equalities, exactly as encode() would.
        [&](const OneOf<FieldSpec, HashSpec, ReverseSpec, IntSpec, DictSpec, LiteralSpec, PartitionSpec,
                        OffsetSpec> auto&) {
          if (auto err = encode_component(c, eq.event, eq.meta, run.prefix)) {
            plan_fail(m, "equality value for '" + c.name + "': " + err->message());
          }
        });
  }
  run.range_at = i;
  return run;
}

// An equality the plan cannot use would silently widen the scan; reject it instead.
void check_equalities_used(const SpecModel& m, const PlanRequest& req, const Equalities& eq, LeadingRun& run) {
  const Component* lead = m.has_lead ? &m.components[0] : nullptr;
  if (lead && req.equals.count(lead->name)) run.used.insert(lead->name);
  for (const auto& key : eq.component_keys) {
    if (run.used.count(key) == 0) {
      const std::string stop = run.range_at < m.components.size() ? m.components[run.range_at].name : "the end";
      plan_fail(m, "equality on '" + key + "' is not part of the leading run of components (the run stops at '" + stop +
                       "', which has no equality value)");
    }
  }
  for (const auto& key : eq.field_keys) {
    bool fed = lead && reads_field(*lead, key);
    for (std::size_t j = m.has_lead ? 1 : 0; j < run.range_at && !fed; ++j) fed = reads_field(m.components[j], key);
    if (!fed) plan_fail(m, "equality on field '" + key + "' feeds no component of the leading run");
  }
}

// A time range narrows keys only when the time component directly follows the leading run;
// returns that component, or nullptr when the request has no range.
const TimeSpec* range_time_component(const SpecModel& m, const PlanRequest& req, std::size_t range_at) {
  if (!req.from_ms && !req.to_ms) return nullptr;
  if (!m.time_index)
    plan_fail(m, "a time range needs a time component with millisecond resolution; this spec has none");
  const Component& t = m.components[*m.time_index];
  if (range_at > *m.time_index) {
    plan_fail(m, "time component '" + t.name + "' has an equality value; a range on it as well is contradictory");
  }
  if (range_at < *m.time_index) {
    const Component& blocker = m.components[range_at];
    if (blocker.is<HashSpec>()) {
      plan_fail(m, "the range on time component '" + t.name + "' comes after hash component '" + blocker.name +
                       "' of " + m.infos[range_at].source +
                       ", whose input is not given: hashing destroys order, so no key range can be planned; "
                       "give an equality value for its input");
    }
    plan_fail(m, "the range on time component '" + t.name + "' needs equality values for every component before it; '" +
                     blocker.name + "' has none");
  }
  return &std::get<TimeSpec>(t.shape);
}

// The salt/bucket values a query must visit: one when the request fixes the lead (directly or
// through its inputs), the buckets of one month for a month salt with a known month, else all.
// {-1} when the spec has no lead.
std::vector<std::int64_t> lead_buckets(const SpecModel& m, const PlanRequest& req, const Equalities& eq) {
  if (!m.has_lead) return {-1};
  const Component& lead = m.components[0];
  const auto* salt = lead.as<SaltSpec>();
  const auto* bucket = lead.as<BucketSpec>();
  const MapEventFields& event = eq.event;
  std::vector<std::int64_t> buckets;
  const auto given = req.equals.find(lead.name);
  std::int64_t v = 0;
  if (given != req.equals.end()) {
    buckets.push_back(parse_index(m, lead, given->second));
  } else if (salt && !salt->random && inputs_known(salt->inputs, event) &&
             (!salt->month_of || known_month(m, *salt, req, event) > 0)) {
    if (salt->month_of && !(salt->month_of->kind == SourceKind::Field && event.field(salt->month_of->field))) {
      // The month is known from a time component's equality, not from the salt's own input: feed
      // lead_value an instant in that month.
      const int month = known_month(m, *salt, req, event);
      const auto mid_month = civil_to_ms(CivilFields{2000, month, 15, 0, 0, 0, 0});
      Component copy = lead;
      std::get<SaltSpec>(copy.shape).time_input = TimeInput::EpochMs;
      MapEventFields with_month = event;
      KafkaMeta meta_month = eq.meta;
      if (salt->month_of->kind == SourceKind::Field) {
        with_month.set(salt->month_of->field, *mid_month);
      } else {
        meta_month.timestamp_ms = *mid_month;
      }
      if (auto err = lead_value(copy, with_month, meta_month, v)) plan_fail(m, err->message());
    } else if (auto err = lead_value(lead, event, eq.meta, v)) {
      plan_fail(m, err->message());
    }
    buckets.push_back(v);
  } else if (bucket && bucket->source.kind == SourceKind::Field && event.field(bucket->source.field)) {
    if (auto err = lead_value(lead, event, eq.meta, v)) plan_fail(m, err->message());
    buckets.push_back(v);
  } else if (salt && salt->month_of && known_month(m, *salt, req, event) > 0) {
    const std::int64_t base = (known_month(m, *salt, req, event) - 1) * salt->buckets;
    for (std::int64_t b = 0; b < salt->buckets; ++b) buckets.push_back(base + b);
  } else {
    for (std::int64_t b = 0; b < lead_values(lead); ++b) buckets.push_back(b);
  }
  return buckets;
}

// [start, stop) of one bucket: the shared prefix, narrowed by the time range when there is one.
// A reversed time stores MAX - t, so the range flips.
ScanRange bucket_range(const PlanRequest& req, std::string base, const TimeSpec* time, std::int64_t lo, bool hi_open) {
  ScanRange r;
  if (!time) {
    r.stop = prefix_successor(base);
    r.start = std::move(base);
    return r;
  }
  if (!time->reversed) {
    r.start = base;
    append_time(*time, lo, r.start);
    if (hi_open) {
      r.stop = prefix_successor(base);
    } else {
      r.stop = base;
      append_time(*time, *req.to_ms, r.stop);
    }
    return r;
  }
  // Stored value s = MAX - t, so t in [lo, to) is s in [MAX - (to-1), MAX - lo + 1).
  r.start = base;
  if (!hi_open) append_stored_time(*time, kLongMax - (*req.to_ms - 1), r.start);
  if (lo == 0) {
    r.stop = prefix_successor(base);
  } else {
    r.stop = base;
    append_stored_time(*time, kLongMax - lo + 1, r.stop);
  }
  return r;
}

// One range per lead value; none at all when the time range holds no instant the time component
// can store (before year 0000 / epoch 0, or after 9999 / Long.MAX_VALUE).
std::vector<ScanRange> build_ranges(const SpecModel& m, const PlanRequest& req,
                                    const std::vector<std::int64_t>& buckets, const std::string& prefix,
                                    const TimeSpec* time) {
  std::int64_t lo = 0;
  bool hi_open = true;
  if (time) {
    const bool pattern = time->format == TimeFormat::Pattern;
    const std::int64_t min = pattern ? kPatternMinMs : 0;
    const std::int64_t max = pattern ? kPatternMaxMs : kLongMax;
    if ((req.to_ms && *req.to_ms <= min) || (req.from_ms && *req.from_ms > max)) return {};
    lo = req.from_ms && *req.from_ms > min ? *req.from_ms : min;
    hi_open = !req.to_ms || *req.to_ms > max;
  }
  std::vector<ScanRange> ranges;
  ranges.reserve(buckets.size());
  for (const std::int64_t b : buckets) {
    std::string base = b >= 0 ? lead_bytes(m.components[0], b) : std::string{};
    base += prefix;
    ScanRange r = bucket_range(req, std::move(base), time, lo, hi_open);
    r.bucket = static_cast<int>(b);
    ranges.push_back(std::move(r));
  }
  return ranges;
}

}  // namespace

std::string prefix_successor(std::string prefix) {
  while (!prefix.empty() && static_cast<unsigned char>(prefix.back()) == 0xff) prefix.pop_back();
  if (!prefix.empty()) prefix.back() = static_cast<char>(static_cast<unsigned char>(prefix.back()) + 1);
  return prefix;
}

std::vector<ScanRange> plan_scan(const SpecModel& m, const PlanRequest& req) {
  check_time_range(m, req);
  const Equalities eq = feed_equalities(m, req);
  LeadingRun run = encode_leading_run(m, req, eq);
  check_equalities_used(m, req, eq, run);
  const TimeSpec* time = range_time_component(m, req, run.range_at);
  return build_ranges(m, req, lead_buckets(m, req, eq), run.prefix, time);
}

std::vector<ScanRange> plan_full_table(const SpecModel& m, int splits) {
  if (splits < 1) plan_fail(m, "splits must be >= 1, got " + std::to_string(splits));
  std::vector<ScanRange> ranges;
  if (m.has_lead) {
    const Component& lead = m.components[0];
    const std::int64_t n = lead_values(lead);
    const std::int64_t k = std::min<std::int64_t>(splits, n);
    for (std::int64_t g = 0; g < k; ++g) {
      const std::int64_t first = g * n / k;
      const std::int64_t next = (g + 1) * n / k;
      ScanRange r;
      r.bucket = static_cast<int>(first);
      // The outer ends stay open so that keys outside every bucket (foreign rows) are still covered.
      if (g > 0) r.start = lead_bytes(lead, first);
      if (g < k - 1) r.stop = lead_bytes(lead, next);
      ranges.push_back(std::move(r));
    }
    return ranges;
  }
  // Unsalted: cut the first byte's range evenly; every key falls in exactly one piece.
  const int k = std::min(splits, 256);
  for (int g = 0; g < k; ++g) {
    ScanRange r;
    if (g > 0) r.start = std::string(1, static_cast<char>(g * 256 / k));
    if (g < k - 1) r.stop = std::string(1, static_cast<char>((g + 1) * 256 / k));
    ranges.push_back(std::move(r));
  }
  return ranges;
}

std::vector<std::string> split_keys(const SpecModel& m) {
  std::vector<std::string> keys;
  if (!m.has_lead) return keys;
  const Component& lead = m.components[0];
  for (std::int64_t b = 1; b < lead_values(lead); ++b) keys.push_back(lead_bytes(lead, b));
  return keys;
}

}  // namespace hbingest::keyspec::detail
