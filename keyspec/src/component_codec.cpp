#include "component_codec.h"

#include <algorithm>
#include <charconv>
#include <cstring>
#include <random>

#include "digest.h"
#include "time_codec.h"

namespace hbingest::keyspec::detail {
namespace {

constexpr std::int64_t kPow10[] = {1LL,
                                   10LL,
                                   100LL,
                                   1000LL,
                                   10000LL,
                                   100000LL,
                                   1000000LL,
                                   10000000LL,
                                   100000000LL,
                                   1000000000LL,
                                   10000000000LL,
                                   100000000000LL,
                                   1000000000000LL,
                                   10000000000000LL,
                                   100000000000000LL,
                                   1000000000000000LL,
                                   10000000000000000LL,
                                   100000000000000000LL,
                                   1000000000000000000LL};

// Largest value a text component of `width` digits holds (19 digits: all of int64).
std::int64_t text_max(std::size_t width) { return width >= 19 ? kLongMax : kPow10[width] - 1; }

// Zero-padded decimal of a value that fits `width` (checked by callers). Two digits per division:
// this runs for every partition, offset and int on the encode path.
void put_decimal(std::string& out, std::int64_t value, std::size_t width) {
  static constexpr char kPairs[] =
      "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
      "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
      "8081828384858687888990919293949596979899";
  char buf[20];
  std::memset(buf, '0', width);
  auto v = static_cast<std::uint64_t>(value);
  std::size_t i = width;
  while (v >= 100) {
    const auto pair = static_cast<std::size_t>(v % 100) * 2;
    v /= 100;
    buf[--i] = kPairs[pair + 1];
    buf[--i] = kPairs[pair];
  }
  if (v >= 10) {
    buf[--i] = kPairs[v * 2 + 1];
    buf[--i] = kPairs[v * 2];
  } else if (v > 0) {
    buf[--i] = static_cast<char>('0' + v);
  }
  out.append(buf, width);
}

void put_be(std::string& out, std::uint64_t value, std::size_t bytes) {
  char buf[8];
  for (std::size_t i = bytes; i-- > 0;) {
    buf[i] = static_cast<char>(value & 0xff);
    value >>= 8;
  }
  out.append(buf, bytes);
}

std::optional<std::int64_t> parse_decimal(std::string_view s) {
  if (s.empty()) return std::nullopt;
  std::int64_t v = 0;
  for (const char ch : s) {
    if (ch < '0' || ch > '9') return std::nullopt;
    if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, ch - '0', &v)) return std::nullopt;
  }
  return v;
}

std::uint64_t get_be(std::string_view s) {
  std::uint64_t v = 0;
  for (const char ch : s) v = (v << 8) | static_cast<unsigned char>(ch);
  return v;
}

// Text form of a value for text components and hash inputs: strings as-is, integers in decimal,
// booleans as true/false. Floats and null have no canonical text and are rejected.
std::optional<std::string_view> text_of(const FieldValue& v, char (&buf)[24]) {
  if (const auto* s = std::get_if<std::string_view>(&v)) return *s;
  if (const auto* i = std::get_if<std::int64_t>(&v)) {
    const auto res = std::to_chars(buf, buf + sizeof buf, *i);
    return std::string_view(buf, static_cast<std::size_t>(res.ptr - buf));
  }
  if (const auto* b = std::get_if<bool>(&v)) return *b ? std::string_view("true") : std::string_view("false");
  return std::nullopt;
}

std::string field_label(const Source& s) { return s.kind == SourceKind::Field ? s.field : s.describe(); }

KeyError make_error(const Component& c, const Source& s, std::string reason) {
  return KeyError{c.name, field_label(s), std::move(reason)};
}

std::string byte_hex(char b) {
  static constexpr char kHex[] = "0123456789abcdef";
  const auto u = static_cast<unsigned char>(b);
  return std::string("0x") + kHex[u >> 4] + kHex[u & 15];
}

std::string& scratch() {
  // Per-thread buffer for hash inputs: its capacity is reused so hashing does not allocate per key.
  thread_local std::string buf;
  return buf;
}

// Appends the canonical bytes of the salt/hash inputs (docs/keyspec.md "Hash input bytes").
std::optional<KeyError> gather_inputs(const Component& c, const std::vector<Source>& inputs, const EventFields& event,
                                      const KafkaMeta& meta, std::string& buf) {
  buf.clear();
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const Source& s = inputs[i];
    if (i > 0) buf.push_back('\0');
    switch (s.kind) {
      case SourceKind::Partition:
        put_be(buf, static_cast<std::uint32_t>(meta.partition), 4);
        break;
      case SourceKind::Offset:
        put_be(buf, static_cast<std::uint64_t>(meta.offset), 8);
        break;
      case SourceKind::Timestamp:
        if (meta.timestamp_ms < 0) return make_error(c, s, "missing (the message has no Kafka timestamp)");
        put_be(buf, static_cast<std::uint64_t>(meta.timestamp_ms), 8);
        break;
      case SourceKind::Topic:
        buf.append(meta.topic);
        break;
      case SourceKind::Field: {
        const auto v = event.field(s.field);
        if (!v) return make_error(c, s, "missing");
        char tmp[24];
        const auto text = text_of(*v, tmp);
        if (!text) return make_error(c, s, "wrong type (expected a string, integer or boolean)");
        buf.append(*text);
        break;
      }
      case SourceKind::None:
        break;
    }
  }
  return std::nullopt;
}

// An integer input; with `as_time` (a bucket given `input:`) the value is read as a time in ms.
std::optional<KeyError> read_integer(const Component& c, const Source& s, std::optional<TimeInput> as_time,
                                     const EventFields& event, const KafkaMeta& meta, std::int64_t& v) {
  const auto value = read_source(s, event, meta);
  if (!value) return make_error(c, s, "missing");
  if (as_time) {
    if (const auto why = read_time_ms(*value, *as_time, v); !why.empty()) return make_error(c, s, std::string(why));
    return std::nullopt;
  }
  if (!read_int(*value, v)) return make_error(c, s, "wrong type (expected an integer)");
  return std::nullopt;
}

// How int, partition and offset components write a number.
struct IntLayout {
  bool binary = false;
  bool reversed = false;
};

std::optional<KeyError> append_int(const Component& c, const Source& s, IntLayout layout, std::int64_t v,
                                   std::string& out) {
  if (v < 0) return make_error(c, s, "negative value " + std::to_string(v) + " (keys order non-negative numbers)");
  if (layout.binary) {
    const std::int64_t max = c.width == 4 ? 2147483647LL : kLongMax;
    if (v > max)
      return make_error(c, s, "value " + std::to_string(v) + " too large for " + std::to_string(c.width) + " bytes");
    put_be(out, static_cast<std::uint64_t>(layout.reversed ? max - v : v), c.width);
    return std::nullopt;
  }
  const std::int64_t max = text_max(c.width);
  if (v > max) {
    return make_error(c, s, "value " + std::to_string(v) + " too long for width " + std::to_string(c.width));
  }
  put_decimal(out, layout.reversed ? max - v : v, c.width);
  return std::nullopt;
}

std::optional<std::int64_t> decode_int(const Component& c, IntLayout layout, std::string_view bytes) {
  if (layout.binary) {
    const std::uint64_t raw = get_be(bytes);
    const std::uint64_t max = c.width == 4 ? 2147483647ULL : static_cast<std::uint64_t>(kLongMax);
    if (raw > max) return std::nullopt;
    const auto v = static_cast<std::int64_t>(raw);
    return layout.reversed ? static_cast<std::int64_t>(max) - v : v;
  }
  const auto v = parse_decimal(bytes);
  if (!v) return std::nullopt;
  return layout.reversed ? text_max(c.width) - *v : *v;
}

const Source& partition_source() {
  static const Source kSource{SourceKind::Partition, ""};
  return kSource;
}

const Source& offset_source() {
  static const Source kSource{SourceKind::Offset, ""};
  return kSource;
}

// The value of `s` as key text (strings as-is, integers in decimal); `buf` backs integer text.
std::optional<KeyError> read_text(const Component& c, const Source& s, const EventFields& event, const KafkaMeta& meta,
                                  char (&buf)[24], std::string_view& text) {
  const auto value = read_source(s, event, meta);
  if (!value) return make_error(c, s, "missing");
  const auto t = text_of(*value, buf);
  if (!t) return make_error(c, s, "wrong type (expected a string or integer)");
  text = *t;
  return std::nullopt;
}

// A value must fit its width (or max_length when terminated) and must not contain the byte that
// decoding strips or splits on.
std::optional<KeyError> check_text(const Component& c, const Source& s, std::string_view text, std::size_t max_length,
                                   char reserved, const char* reserved_name) {
  const std::size_t n = text.size();
  if (c.width > 0 && n > c.width) {
    return make_error(c, s, "too long for width " + std::to_string(c.width) + " (got " + std::to_string(n) + " bytes)");
  }
  if (c.width == 0 && n > max_length) {
    return make_error(c, s, "too long: " + std::to_string(n) + " bytes, max_length " + std::to_string(max_length));
  }
  if (n > 0 && std::memchr(text.data(), reserved, n) != nullptr) {
    return make_error(c, s, std::string("contains the ") + reserved_name + " byte " + byte_hex(reserved));
  }
  return std::nullopt;
}

[[noreturn]] void fail(const Component& c, std::size_t pos, const std::string& why) {
  throw DecodeError("key component '" + c.name + "' at byte " + std::to_string(pos) + ": " + why);
}

// `bytes` without the trailing pad bytes; a pad byte left inside means the key is malformed.
std::string_view strip_trailing_pad(const Component& c, std::size_t begin, std::string_view bytes, char pad) {
  const auto last = bytes.find_last_not_of(pad);
  const std::string_view v = last == std::string_view::npos ? std::string_view{} : bytes.substr(0, last + 1);
  if (v.find(pad) != std::string_view::npos) fail(c, begin, "pad byte inside the value");
  return v;
}

}  // namespace

std::string Source::describe() const {
  switch (kind) {
    case SourceKind::Field:
      return "field:" + field;
    case SourceKind::Topic:
      return "kafka:topic";
    case SourceKind::Partition:
      return "kafka:partition";
    case SourceKind::Offset:
      return "kafka:offset";
    case SourceKind::Timestamp:
      return "kafka:timestamp";
    case SourceKind::None:
      return "";
  }
  return "";
}

std::optional<FieldValue> read_source(const Source& source, const EventFields& event, const KafkaMeta& meta) {
  switch (source.kind) {
    case SourceKind::Field:
      return event.field(source.field);
    case SourceKind::Topic:
      return FieldValue{meta.topic};
    case SourceKind::Partition:
      return FieldValue{static_cast<std::int64_t>(meta.partition)};
    case SourceKind::Offset:
      return FieldValue{meta.offset};
    case SourceKind::Timestamp:
      if (meta.timestamp_ms < 0) return std::nullopt;
      return FieldValue{meta.timestamp_ms};
    case SourceKind::None:
      break;
  }
  return std::nullopt;
}

std::optional<KeyError> lead_value(const Component& c, const EventFields& event, const KafkaMeta& meta,
                                   std::int64_t& value) {
  if (const auto* b = c.as<BucketSpec>()) {
    std::int64_t v = 0;
    if (auto err = read_integer(c, b->source, b->as_time, event, meta, v)) return err;
    value = ((v % b->buckets) + b->buckets) % b->buckets;
    return std::nullopt;
  }
  const SaltSpec& s = std::get<SaltSpec>(c.shape);
  if (s.random) {
    // Explicitly requested (the loader warns): replays then land in other buckets.
    thread_local std::minstd_rand rng{std::random_device{}()};
    value = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(s.lead_values()));
    return std::nullopt;
  }
  std::string& buf = scratch();
  if (auto err = gather_inputs(c, s.inputs, event, meta, buf)) return err;
  std::int64_t month_base = 0;
  if (s.month_of) {
    const auto v = read_source(*s.month_of, event, meta);
    if (!v) return make_error(c, *s.month_of, "missing");
    std::int64_t ms = 0;
    if (const auto why = read_time_ms(*v, s.time_input, ms); !why.empty()) {
      return make_error(c, *s.month_of, std::string(why));
    }
    const int month = utc_month(ms);
    if (!s.inputs.empty()) buf.push_back('\0');
    buf.push_back(static_cast<char>('0' + month / 10));
    buf.push_back(static_cast<char>('0' + month % 10));
    month_base = (month - 1) * s.buckets;
  }
  value = month_base + static_cast<std::int64_t>(xxh64(buf) % static_cast<std::uint64_t>(s.buckets));
  return std::nullopt;
}

void append_lead(const Component& c, std::int64_t value, std::string& out) {
  const auto* salt = c.as<SaltSpec>();
  const bool binary = salt ? salt->binary : std::get<BucketSpec>(c.shape).binary;
  if (binary) {
    out.push_back(static_cast<char>(value));
  } else {
    put_decimal(out, value, c.width);
  }
}

std::string_view append_time(const TimeSpec& t, std::int64_t ms, std::string& out) {
  if (t.format == TimeFormat::Pattern) {
    return format_pattern(t.pattern, ms, out) ? std::string_view{}
                                              : std::string_view{"time outside the years 0000-9999 of the pattern"};
  }
  if (ms < 0) return "negative time (binary and decimal times hold epoch ms >= 0)";
  append_stored_time(t, t.reversed ? kLongMax - ms : ms, out);
  return {};
}

void append_stored_time(const TimeSpec& t, std::int64_t stored, std::string& out) {
  if (t.format == TimeFormat::Binary) {
    put_be(out, static_cast<std::uint64_t>(stored), 8);
  } else {
    put_decimal(out, stored, 19);
  }
}

std::optional<KeyError> encode_component(const Component& c, const EventFields& event, const KafkaMeta& meta,
                                         std::string& out) {
  using Result = std::optional<KeyError>;
  return visit_kind(
      c,
      [&](const OneOf<SaltSpec, BucketSpec> auto&) -> Result {
        std::int64_t v = 0;
        if (auto err = lead_value(c, event, meta, v)) return err;
        append_lead(c, v, out);
        return std::nullopt;
      },
      [&](const FieldSpec& f) -> Result {
        char buf[24];
        std::string_view text;
        if (auto err = read_text(c, f.source, event, meta, buf, text)) return err;
        const char reserved = f.terminator ? *f.terminator : f.pad;
        if (auto err = check_text(c, f.source, text, f.max_length, reserved, f.terminator ? "terminator" : "pad")) {
          return err;
        }
        const std::size_t n = text.size();
        if (f.terminator) {
          out.append(text);
          out.push_back(*f.terminator);
        } else if (f.align_right) {
          out.append(c.width - n, f.pad);
          out.append(text);
        } else {
          out.append(text);
          out.append(c.width - n, f.pad);
        }
        return std::nullopt;
      },
      [&](const ReverseSpec& r) -> Result {
        char buf[24];
        std::string_view text;
        if (auto err = read_text(c, r.source, event, meta, buf, text)) return err;
        if (auto err = check_text(c, r.source, text, c.width, r.pad, "pad")) return err;
        out.append(text.rbegin(), text.rend());
        out.append(c.width - text.size(), r.pad);
        return std::nullopt;
      },
      [&](const DictSpec& d) -> Result {
        char buf[24];
        std::string_view text;
        if (auto err = read_text(c, d.source, event, meta, buf, text)) return err;
        for (const auto& [name, code] : d.codes) {
          if (name == text) {
            out.append(code);
            return std::nullopt;
          }
        }
        return make_error(c, d.source, "unknown dict value '" + std::string(text) + "'");
      },
      [&](const HashSpec& h) -> Result {
        std::string& buf = scratch();
        if (auto err = gather_inputs(c, h.inputs, event, meta, buf)) return err;
        unsigned char digest[20];
        if (h.algo == HashAlgo::Xxh64) {
          std::uint64_t v = xxh64(buf);
          for (int i = 7; i >= 0; --i) {
            digest[i] = static_cast<unsigned char>(v & 0xff);
            v >>= 8;
          }
        } else {
          evp_digest(h.md.get(), buf, digest);
        }
        out.append(reinterpret_cast<const char*>(digest), c.width);
        return std::nullopt;
      },
      [&](const TimeSpec& t) -> Result {
        const auto value = read_source(t.source, event, meta);
        if (!value) return make_error(c, t.source, "missing");
        std::int64_t ms = 0;
        if (const auto why = read_time_ms(*value, t.input, ms); !why.empty()) {
          return make_error(c, t.source, std::string(why));
        }
        if (const auto why = append_time(t, ms, out); !why.empty()) return make_error(c, t.source, std::string(why));
        return std::nullopt;
      },
      [&](const IntSpec& i) -> Result {
        std::int64_t v = 0;
        if (auto err = read_integer(c, i.source, std::nullopt, event, meta, v)) return err;
        return append_int(c, i.source, {i.binary, i.reversed}, v, out);
      },
      [&](const PartitionSpec& p) -> Result {
        return append_int(c, partition_source(), {p.binary, false}, meta.partition, out);
      },
      [&](const OffsetSpec& o) -> Result {
        return append_int(c, offset_source(), {o.binary, false}, meta.offset, out);
      },
      [&](const LiteralSpec& l) -> Result {
        out.append(l.value);
        return std::nullopt;
      });
}

std::size_t component_extent(const Component& c, std::string_view key, std::size_t pos) {
  if (c.width > 0) {
    if (pos + c.width > key.size()) {
      fail(
          c, pos,
          "key too short (needs " + std::to_string(c.width) + " bytes, " + std::to_string(key.size() - pos) + " left)");
    }
    return c.width;
  }
  // Width 0 is only ever a terminator field (the loader gives every other kind a width).
  const char terminator = *std::get<FieldSpec>(c.shape).terminator;
  const auto end = key.find(terminator, pos);
  if (end == std::string_view::npos) fail(c, pos, "no terminator byte " + byte_hex(terminator));
  return end - pos + 1;
}

std::optional<std::int64_t> decode_number(const Component& c, std::string_view bytes) {
  using Result = std::optional<std::int64_t>;
  return visit_kind(
      c,
      [&](const OneOf<SaltSpec, BucketSpec> auto& lead) -> Result {
        const auto v = lead.binary ? Result(static_cast<unsigned char>(bytes[0])) : parse_decimal(bytes);
        if (!v || *v >= lead.lead_values()) return std::nullopt;
        return v;
      },
      [&](const IntSpec& i) {
        return decode_int(c, {i.binary, i.reversed}, bytes);
      },
      [&](const OneOf<PartitionSpec, OffsetSpec> auto& p) {
        return decode_int(c, {p.binary, false}, bytes);
      },
      [&](const TimeSpec& t) -> Result {
        if (t.format == TimeFormat::Pattern) {
          if (!t.full_resolution) return std::nullopt;
          CivilFields civil;
          if (!parse_pattern_text(t.pattern, bytes, civil)) return std::nullopt;
          return civil_to_ms(civil);
        }
        std::int64_t stored = 0;
        if (t.format == TimeFormat::Binary) {
          const std::uint64_t raw = get_be(bytes);
          if (raw > static_cast<std::uint64_t>(kLongMax)) return std::nullopt;
          stored = static_cast<std::int64_t>(raw);
        } else {
          const auto v = parse_decimal(bytes);
          if (!v) return std::nullopt;
          stored = *v;
        }
        return t.reversed ? kLongMax - stored : stored;
      },
      [](const OneOf<FieldSpec, HashSpec, ReverseSpec, DictSpec, LiteralSpec> auto&) -> Result {
        return std::nullopt;
      });
}

KeyPart decode_component(const Component& c, std::string_view key, std::size_t begin, std::size_t end) {
  KeyPart part;
  part.name = c.name;
  part.type = std::string(c.kind_name());
  part.begin = begin;
  part.end = end;
  const std::string_view bytes = key.substr(begin, end - begin);
  const auto numeric = [&] {
    part.number = decode_number(c, bytes);
    if (!part.number) fail(c, begin, "not a valid " + part.type + " value: " + to_hex(bytes));
    part.text = std::to_string(*part.number);
  };
  visit_kind(
      c, [&](const OneOf<SaltSpec, BucketSpec, IntSpec, PartitionSpec, OffsetSpec> auto&) { numeric(); },
      [&](const TimeSpec& t) {
        if (t.format == TimeFormat::Pattern && !t.full_resolution) {
          CivilFields civil;
          if (!parse_pattern_text(t.pattern, bytes, civil)) fail(c, begin, "does not match the time pattern");
          part.text = std::string(bytes);
          return;
        }
        part.number = decode_number(c, bytes);
        if (!part.number) fail(c, begin, "not a valid time: " + to_hex(bytes));
        part.text = format_rfc3339(*part.number);
      },
      [&](const FieldSpec& f) {
        std::string_view v = bytes;
        if (f.terminator) {
          v.remove_suffix(1);
        } else if (f.align_right) {
          const auto first = v.find_first_not_of(f.pad);
          v = first == std::string_view::npos ? std::string_view{} : v.substr(first);
          if (v.find(f.pad) != std::string_view::npos) fail(c, begin, "pad byte inside the value");
        } else {
          v = strip_trailing_pad(c, begin, v, f.pad);
        }
        part.text = std::string(v);
      },
      [&](const ReverseSpec& r) {
        const std::string_view v = strip_trailing_pad(c, begin, bytes, r.pad);
        part.text.assign(v.rbegin(), v.rend());
      },
      [&](const HashSpec&) { part.text = to_hex(bytes); },
      [&](const DictSpec& d) {
        const auto it = std::find_if(d.codes.begin(), d.codes.end(), [&](const auto& e) { return e.second == bytes; });
        if (it == d.codes.end()) fail(c, begin, "unknown dict code " + to_hex(bytes));
        part.text = it->first;
      },
      [&](const LiteralSpec& l) {
        if (bytes != l.value) fail(c, begin, "literal mismatch: " + to_hex(bytes) + " != " + to_hex(l.value));
        part.text = std::string(bytes);
      });
  return part;
}

}  // namespace hbingest::keyspec::detail
