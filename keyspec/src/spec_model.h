#pragma once
// The loaded, validated form of a key spec, shared by the loader, encoder, decoder and planner.
// Internal to the keyspec library: immutable after load_spec() returns.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "hbingest/keyspec/key_spec.h"

struct evp_md_st;  // OpenSSL's EVP_MD, kept out of this header

namespace hbingest::keyspec::detail {

enum class Kind { Salt, Field, Hash, Reverse, Time, Int, Bucket, Dict, Literal, Partition, Offset };

enum class SourceKind { None, Field, Topic, Partition, Offset, Timestamp };

struct Source {
  SourceKind kind = SourceKind::None;
  std::string field;  // SourceKind::Field only
  std::string describe() const;  // "field:user_id", "kafka:offset"
  friend bool operator==(const Source&, const Source&) = default;
};

enum class TimeInput { EpochMs, EpochS, Rfc3339, Auto };
enum class TimeFormat { Pattern, Binary, Decimal };
enum class HashAlgo { Md5, Sha1, Xxh64 };

enum class TimeUnit { Year, Month, Day, Hour, Minute, Second, Milli, Literal };

struct TimeToken {
  TimeUnit unit = TimeUnit::Literal;
  int width = 1;     // digits (4 for years, 3 for millis, 2 otherwise); 1 for a literal
  char literal = 0;  // TimeUnit::Literal only
};

struct MdDeleter {
  void operator()(evp_md_st* md) const noexcept;
};

struct Component {
  std::string name;
  Kind kind = Kind::Literal;
  Source source;               // the single input of field/reverse/time/int/bucket/dict
  std::vector<Source> inputs;  // salt and hash inputs, hashed in order
  bool binary = false;         // binary (big-endian / raw byte) instead of decimal text
  std::size_t width = 0;       // encoded width in bytes; 0 only for a terminator-delimited field
  char pad = '\x01';
  bool align_right = false;    // field: pad bytes before the value (003's ^A^Auser)
  std::optional<char> terminator;
  std::size_t max_length = 0;  // longest value accepted (field, reverse)
  bool reversed = false;
  bool random = false;
  std::int64_t buckets = 0;    // salt/bucket modulus; for a month salt, buckets per month
  std::optional<Source> month_of;
  TimeInput time_input = TimeInput::Auto;  // time, bucket with input:, salt month_of
  bool numeric_as_time = false;            // bucket: `input:` given, read the value as time ms
  TimeFormat time_format = TimeFormat::Pattern;
  std::vector<TimeToken> pattern;
  bool full_resolution = false;  // pattern runs yyyy → SSS without gaps: an instant, plannable
  HashAlgo algo = HashAlgo::Md5;
  std::shared_ptr<evp_md_st> md;  // fetched once at load (md5/sha1)
  std::vector<std::pair<std::string, std::string>> dict;  // value → code
  std::string literal;

  // Number of distinct values of a salt or bucket component (months × buckets for a month salt).
  std::int64_t lead_values() const { return month_of ? buckets * 12 : buckets; }
};

struct SpecModel {
  std::string source_name;
  std::string name;
  std::size_t max_key_length = 256;
  std::vector<Component> components;
  std::vector<ComponentInfo> infos;
  std::vector<std::optional<std::size_t>> fixed_offset;  // start of component i when all before are fixed
  std::optional<std::size_t> event_index;
  std::optional<std::size_t> time_index;
  std::optional<std::size_t> partition_index;
  std::optional<std::size_t> offset_index;
  bool has_lead = false;  // components[0] is a salt or bucket: one scan range per value
  std::vector<std::string> warnings;
};

inline constexpr std::int64_t kLongMax = 9223372036854775807LL;

}  // namespace hbingest::keyspec::detail
