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

std::string field_label(const Source& s) {
  return s.kind == SourceKind::Field ? s.field : s.describe();
}

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
std::optional<KeyError> gather_inputs(const Component& c, const EventFields& event, const KafkaMeta& meta,
                                      std::string& buf) {
  buf.clear();
  for (std::size_t i = 0; i < c.inputs.size(); ++i) {
    const Source& s = c.inputs[i];
    if (i > 0) buf.push_back('\0');
    switch (s.kind) {
      case SourceKind::Partition: put_be(buf, static_cast<std::uint32_t>(meta.partition), 4); break;
      case SourceKind::Offset: put_be(buf, static_cast<std::uint64_t>(meta.offset), 8); break;
      case SourceKind::Timestamp:
        if (meta.timestamp_ms < 0) return make_error(c, s, "missing (the message has no Kafka timestamp)");
        put_be(buf, static_cast<std::uint64_t>(meta.timestamp_ms), 8);
        break;
      case SourceKind::Topic: buf.append(meta.topic); break;
      case SourceKind::Field: {
        const auto v = event.field(s.field);
        if (!v) return make_error(c, s, "missing");
        char tmp[24];
        const auto text = text_of(*v, tmp);
        if (!text) return make_error(c, s, "wrong type (expected a string, integer or boolean)");
        buf.append(*text);
        break;
      }
      case SourceKind::None: break;
    }
  }
  return std::nullopt;
}

std::optional<KeyError> read_integer(const Component& c, const EventFields& event, const KafkaMeta& meta,
                                     std::int64_t& v) {
  const auto value = read_source(c.source, event, meta);
  if (!value) return make_error(c, c.source, "missing");
  if (c.numeric_as_time) {
    if (const auto why = read_time_ms(*value, c.time_input, v); !why.empty()) return make_error(c, c.source, std::string(why));
    return std::nullopt;
  }
  if (!read_int(*value, v)) return make_error(c, c.source, "wrong type (expected an integer)");
  return std::nullopt;
}

std::optional<KeyError> append_int(const Component& c, const Source& s, std::int64_t v, std::string& out) {
  if (v < 0) return make_error(c, s, "negative value " + std::to_string(v) + " (keys order non-negative numbers)");
  if (c.binary) {
    const std::int64_t max = c.width == 4 ? 2147483647LL : kLongMax;
    if (v > max) return make_error(c, s, "value " + std::to_string(v) + " too large for " + std::to_string(c.width) + " bytes");
    put_be(out, static_cast<std::uint64_t>(c.reversed ? max - v : v), c.width);
    return std::nullopt;
  }
  const std::int64_t max = text_max(c.width);
  if (v > max) {
    return make_error(c, s, "value " + std::to_string(v) + " too long for width " + std::to_string(c.width));
  }
  put_decimal(out, c.reversed ? max - v : v, c.width);
  return std::nullopt;
}

[[noreturn]] void fail(const Component& c, std::size_t pos, const std::string& why) {
  throw DecodeError("key component '" + c.name + "' at byte " + std::to_string(pos) + ": " + why);
}

}  // namespace

std::string Source::describe() const {
  switch (kind) {
    case SourceKind::Field: return "field:" + field;
    case SourceKind::Topic: return "kafka:topic";
    case SourceKind::Partition: return "kafka:partition";
    case SourceKind::Offset: return "kafka:offset";
    case SourceKind::Timestamp: return "kafka:timestamp";
    case SourceKind::None: return "";
  }
  return "";
}

std::string_view kind_name(Kind kind) {
  switch (kind) {
    case Kind::Salt: return "salt";
    case Kind::Field: return "field";
    case Kind::Hash: return "hash";
    case Kind::Reverse: return "reverse";
    case Kind::Time: return "time";
    case Kind::Int: return "int";
    case Kind::Bucket: return "bucket";
    case Kind::Dict: return "dict";
    case Kind::Literal: return "literal";
    case Kind::Partition: return "partition";
    case Kind::Offset: return "offset";
  }
  return "";
}

std::optional<FieldValue> read_source(const Source& source, const EventFields& event, const KafkaMeta& meta) {
  switch (source.kind) {
    case SourceKind::Field: return event.field(source.field);
    case SourceKind::Topic: return FieldValue{meta.topic};
    case SourceKind::Partition: return FieldValue{static_cast<std::int64_t>(meta.partition)};
    case SourceKind::Offset: return FieldValue{meta.offset};
    case SourceKind::Timestamp:
      if (meta.timestamp_ms < 0) return std::nullopt;
      return FieldValue{meta.timestamp_ms};
    case SourceKind::None: break;
  }
  return std::nullopt;
}

std::optional<KeyError> lead_value(const Component& c, const EventFields& event, const KafkaMeta& meta,
                                   std::int64_t& value) {
  if (c.kind == Kind::Bucket) {
    std::int64_t v = 0;
    if (auto err = read_integer(c, event, meta, v)) return err;
    value = ((v % c.buckets) + c.buckets) % c.buckets;
    return std::nullopt;
  }
  if (c.random) {
    // Explicitly requested (the loader warns): replays then land in other buckets.
    thread_local std::minstd_rand rng{std::random_device{}()};
    value = static_cast<std::int64_t>(rng() % static_cast<std::uint64_t>(c.lead_values()));
    return std::nullopt;
  }
  std::string& buf = scratch();
  if (auto err = gather_inputs(c, event, meta, buf)) return err;
  std::int64_t month_base = 0;
  if (c.month_of) {
    const auto v = read_source(*c.month_of, event, meta);
    if (!v) return make_error(c, *c.month_of, "missing");
    std::int64_t ms = 0;
    if (const auto why = read_time_ms(*v, c.time_input, ms); !why.empty()) {
      return make_error(c, *c.month_of, std::string(why));
    }
    const int month = utc_month(ms);
    if (!c.inputs.empty()) buf.push_back('\0');
    buf.push_back(static_cast<char>('0' + month / 10));
    buf.push_back(static_cast<char>('0' + month % 10));
    month_base = (month - 1) * c.buckets;
  }
  value = month_base + static_cast<std::int64_t>(xxh64(buf) % static_cast<std::uint64_t>(c.buckets));
  return std::nullopt;
}

void append_lead(const Component& c, std::int64_t value, std::string& out) {
  if (c.binary) {
    out.push_back(static_cast<char>(value));
  } else {
    put_decimal(out, value, c.width);
  }
}

std::string_view append_time(const Component& c, std::int64_t ms, std::string& out) {
  if (c.time_format == TimeFormat::Pattern) {
    return format_pattern(c.pattern, ms, out) ? std::string_view{}
                                              : std::string_view{"time outside the years 0000-9999 of the pattern"};
  }
  if (ms < 0) return "negative time (binary and decimal times hold epoch ms >= 0)";
  append_stored_time(c, c.reversed ? kLongMax - ms : ms, out);
  return {};
}

void append_stored_time(const Component& c, std::int64_t stored, std::string& out) {
  if (c.time_format == TimeFormat::Binary) {
    put_be(out, static_cast<std::uint64_t>(stored), 8);
  } else {
    put_decimal(out, stored, 19);
  }
}

std::optional<KeyError> encode_component(const Component& c, const EventFields& event, const KafkaMeta& meta,
                                         std::string& out) {
  switch (c.kind) {
    case Kind::Salt:
    case Kind::Bucket: {
      std::int64_t v = 0;
      if (auto err = lead_value(c, event, meta, v)) return err;
      append_lead(c, v, out);
      return std::nullopt;
    }
    case Kind::Field:
    case Kind::Reverse:
    case Kind::Dict: {
      const auto value = read_source(c.source, event, meta);
      if (!value) return make_error(c, c.source, "missing");
      char buf[24];
      const auto text = text_of(*value, buf);
      if (!text) return make_error(c, c.source, "wrong type (expected a string or integer)");
      if (c.kind == Kind::Dict) {
        for (const auto& [name, code] : c.dict) {
          if (name == *text) {
            out.append(code);
            return std::nullopt;
          }
        }
        return make_error(c, c.source, "unknown dict value '" + std::string(*text) + "'");
      }
      const std::size_t n = text->size();
      if (c.width > 0 && n > c.width) {
        return make_error(c, c.source, "too long for width " + std::to_string(c.width) + " (got " + std::to_string(n) + " bytes)");
      }
      if (c.width == 0 && n > c.max_length) {
        return make_error(c, c.source,
                          "too long: " + std::to_string(n) + " bytes, max_length " + std::to_string(c.max_length));
      }
      const char reserved = c.terminator ? *c.terminator : c.pad;
      if (n > 0 && std::memchr(text->data(), reserved, n) != nullptr) {
        return make_error(c, c.source,
                          std::string("contains the ") + (c.terminator ? "terminator" : "pad") + " byte " + byte_hex(reserved));
      }
      if (c.kind == Kind::Reverse) {
        out.append(text->rbegin(), text->rend());
        out.append(c.width - n, c.pad);
      } else if (c.terminator) {
        out.append(*text);
        out.push_back(*c.terminator);
      } else if (c.align_right) {
        out.append(c.width - n, c.pad);
        out.append(*text);
      } else {
        out.append(*text);
        out.append(c.width - n, c.pad);
      }
      return std::nullopt;
    }
    case Kind::Hash: {
      std::string& buf = scratch();
      if (auto err = gather_inputs(c, event, meta, buf)) return err;
      unsigned char digest[20];
      if (c.algo == HashAlgo::Xxh64) {
        std::uint64_t h = xxh64(buf);
        for (int i = 7; i >= 0; --i) {
          digest[i] = static_cast<unsigned char>(h & 0xff);
          h >>= 8;
        }
      } else {
        evp_digest(c.md.get(), buf, digest);
      }
      out.append(reinterpret_cast<const char*>(digest), c.width);
      return std::nullopt;
    }
    case Kind::Time: {
      const auto value = read_source(c.source, event, meta);
      if (!value) return make_error(c, c.source, "missing");
      std::int64_t ms = 0;
      if (const auto why = read_time_ms(*value, c.time_input, ms); !why.empty()) {
        return make_error(c, c.source, std::string(why));
      }
      if (const auto why = append_time(c, ms, out); !why.empty()) return make_error(c, c.source, std::string(why));
      return std::nullopt;
    }
    case Kind::Int:
    case Kind::Partition:
    case Kind::Offset: {
      std::int64_t v = 0;
      if (auto err = read_integer(c, event, meta, v)) return err;
      return append_int(c, c.source, v, out);
    }
    case Kind::Literal: out.append(c.literal); return std::nullopt;
  }
  return std::nullopt;
}

std::size_t component_extent(const Component& c, std::string_view key, std::size_t pos) {
  if (c.width > 0) {
    if (pos + c.width > key.size()) {
      fail(c, pos, "key too short (needs " + std::to_string(c.width) + " bytes, " + std::to_string(key.size() - pos) + " left)");
    }
    return c.width;
  }
  const auto end = key.find(*c.terminator, pos);
  if (end == std::string_view::npos) fail(c, pos, "no terminator byte " + byte_hex(*c.terminator));
  return end - pos + 1;
}

std::optional<std::int64_t> decode_number(const Component& c, std::string_view bytes) {
  switch (c.kind) {
    case Kind::Salt:
    case Kind::Bucket: {
      const auto v = c.binary ? std::optional<std::int64_t>(static_cast<unsigned char>(bytes[0])) : parse_decimal(bytes);
      if (!v || *v >= c.lead_values()) return std::nullopt;
      return v;
    }
    case Kind::Int:
    case Kind::Partition:
    case Kind::Offset: {
      if (c.binary) {
        const std::uint64_t raw = get_be(bytes);
        const std::uint64_t max = c.width == 4 ? 2147483647ULL : static_cast<std::uint64_t>(kLongMax);
        if (raw > max) return std::nullopt;
        const auto v = static_cast<std::int64_t>(raw);
        return c.reversed ? static_cast<std::int64_t>(max) - v : v;
      }
      const auto v = parse_decimal(bytes);
      if (!v) return std::nullopt;
      return c.reversed ? text_max(c.width) - *v : *v;
    }
    case Kind::Time: {
      if (c.time_format == TimeFormat::Pattern) {
        if (!c.full_resolution) return std::nullopt;
        CivilFields civil;
        if (!parse_pattern_text(c.pattern, bytes, civil)) return std::nullopt;
        return civil_to_ms(civil);
      }
      std::int64_t stored = 0;
      if (c.time_format == TimeFormat::Binary) {
        const std::uint64_t raw = get_be(bytes);
        if (raw > static_cast<std::uint64_t>(kLongMax)) return std::nullopt;
        stored = static_cast<std::int64_t>(raw);
      } else {
        const auto v = parse_decimal(bytes);
        if (!v) return std::nullopt;
        stored = *v;
      }
      return c.reversed ? kLongMax - stored : stored;
    }
    default: return std::nullopt;
  }
}

KeyPart decode_component(const Component& c, std::string_view key, std::size_t begin, std::size_t end) {
  KeyPart part;
  part.name = c.name;
  part.type = std::string(kind_name(c.kind));
  part.begin = begin;
  part.end = end;
  const std::string_view bytes = key.substr(begin, end - begin);
  switch (c.kind) {
    case Kind::Salt:
    case Kind::Bucket:
    case Kind::Int:
    case Kind::Partition:
    case Kind::Offset: {
      part.number = decode_number(c, bytes);
      if (!part.number) fail(c, begin, "not a valid " + part.type + " value: " + to_hex(bytes));
      part.text = std::to_string(*part.number);
      break;
    }
    case Kind::Time: {
      if (c.time_format == TimeFormat::Pattern && !c.full_resolution) {
        CivilFields civil;
        if (!parse_pattern_text(c.pattern, bytes, civil)) fail(c, begin, "does not match the time pattern");
        part.text = std::string(bytes);
        break;
      }
      part.number = decode_number(c, bytes);
      if (!part.number) fail(c, begin, "not a valid time: " + to_hex(bytes));
      part.text = format_rfc3339(*part.number);
      break;
    }
    case Kind::Field: {
      std::string_view v = bytes;
      if (c.terminator) {
        v.remove_suffix(1);
      } else if (c.align_right) {
        const auto first = v.find_first_not_of(c.pad);
        v = first == std::string_view::npos ? std::string_view{} : v.substr(first);
        if (v.find(c.pad) != std::string_view::npos) fail(c, begin, "pad byte inside the value");
      } else {
        const auto last = v.find_last_not_of(c.pad);
        v = last == std::string_view::npos ? std::string_view{} : v.substr(0, last + 1);
        if (v.find(c.pad) != std::string_view::npos) fail(c, begin, "pad byte inside the value");
      }
      part.text = std::string(v);
      break;
    }
    case Kind::Reverse: {
      std::string_view v = bytes;
      const auto last = v.find_last_not_of(c.pad);
      v = last == std::string_view::npos ? std::string_view{} : v.substr(0, last + 1);
      if (v.find(c.pad) != std::string_view::npos) fail(c, begin, "pad byte inside the value");
      part.text.assign(v.rbegin(), v.rend());
      break;
    }
    case Kind::Hash: part.text = to_hex(bytes); break;
    case Kind::Dict: {
      const auto it = std::find_if(c.dict.begin(), c.dict.end(), [&](const auto& e) { return e.second == bytes; });
      if (it == c.dict.end()) fail(c, begin, "unknown dict code " + to_hex(bytes));
      part.text = it->first;
      break;
    }
    case Kind::Literal:
      if (bytes != c.literal) fail(c, begin, "literal mismatch: " + to_hex(bytes) + " != " + to_hex(c.literal));
      part.text = std::string(bytes);
      break;
  }
  return part;
}

}  // namespace hbingest::keyspec::detail
