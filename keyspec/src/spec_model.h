#pragma once
// The loaded, validated form of a key spec, shared by the loader, encoder, decoder and planner.
// Internal to the keyspec library: immutable after load_spec() returns.

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "hbingest/keyspec/event_time.h"
#include "hbingest/keyspec/key_spec.h"

struct evp_md_st;  // OpenSSL's EVP_MD, kept out of this header

namespace hbingest::keyspec::detail {

enum class SourceKind { None, Field, Topic, Partition, Offset, Timestamp };

struct Source {
  SourceKind kind = SourceKind::None;
  std::string field;             // SourceKind::Field only
  std::string describe() const;  // "field:user_id", "kafka:offset"
  friend bool operator==(const Source&, const Source&) = default;
};

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

// One struct per component kind, carrying only what that kind needs. Each names its `type:` word
// in kName. A component's encoded width is common to all kinds and lives in Component.

struct SaltSpec {
  static constexpr std::string_view kName = "salt";
  std::vector<Source> inputs;  // hashed in order; empty for a random salt
  bool random = false;
  std::int64_t buckets = 0;  // for a month salt, buckets per month
  std::optional<Source> month_of;
  TimeInput time_input = TimeInput::Auto;  // how month_of is read
  bool binary = false;                     // one byte instead of zero-padded decimal
  // Distinct values: months × buckets for a month salt.
  std::int64_t lead_values() const { return month_of ? buckets * 12 : buckets; }
};

struct FieldSpec {
  static constexpr std::string_view kName = "field";
  Source source;
  char pad = '\x01';
  bool align_right = false;        // pad bytes before the value (003's ^A^Auser)
  std::optional<char> terminator;  // set: variable length, Component::width is 0
  std::size_t max_length = 0;      // longest value accepted
};

struct HashSpec {
  static constexpr std::string_view kName = "hash";
  std::vector<Source> inputs;  // hashed in order
  HashAlgo algo = HashAlgo::Md5;
  std::shared_ptr<evp_md_st> md;  // fetched once at load (md5/sha1)
};

struct ReverseSpec {
  static constexpr std::string_view kName = "reverse";
  Source source;
  char pad = '\x01';
};

struct TimeSpec {
  static constexpr std::string_view kName = "time";
  Source source;
  TimeInput input = TimeInput::Auto;
  bool reversed = false;  // stores Long.MAX_VALUE - ms (binary and decimal only)
  TimeFormat format = TimeFormat::Pattern;
  std::vector<TimeToken> pattern;
  bool full_resolution = false;  // pattern runs yyyy → SSS without gaps: an instant, plannable
  // An instant a query can range over: binary, decimal or a full-resolution pattern.
  bool plannable() const { return format != TimeFormat::Pattern || full_resolution; }
};

struct IntSpec {
  static constexpr std::string_view kName = "int";
  Source source;
  bool binary = false;
  bool reversed = false;  // stores max - v
};

struct BucketSpec {
  static constexpr std::string_view kName = "bucket";
  Source source;
  std::int64_t buckets = 0;
  std::optional<TimeInput> as_time;  // `input:` given: the value is a time, bucketed by its ms
  bool binary = false;
  std::int64_t lead_values() const { return buckets; }
};

struct DictSpec {
  static constexpr std::string_view kName = "dict";
  Source source;
  std::vector<std::pair<std::string, std::string>> codes;  // value → code, all of the same length
};

struct LiteralSpec {
  static constexpr std::string_view kName = "literal";
  std::string value;
};

struct PartitionSpec {
  static constexpr std::string_view kName = "partition";
  bool binary = false;
};

struct OffsetSpec {
  static constexpr std::string_view kName = "offset";
  bool binary = false;
};

// Adding a kind: a struct above, an entry here; every visit() below then fails to compile until it
// handles the new kind.
using Shape = std::variant<SaltSpec, FieldSpec, HashSpec, ReverseSpec, TimeSpec, IntSpec, BucketSpec, DictSpec,
                           LiteralSpec, PartitionSpec, OffsetSpec>;

struct Component {
  std::string name;
  std::size_t width = 0;  // encoded width in bytes; 0 only for a terminator-delimited field
  Shape shape;

  template <class T>
  const T* as() const {
    return std::get_if<T>(&shape);
  }
  template <class T>
  bool is() const {
    return std::holds_alternative<T>(shape);
  }
  std::string_view kind_name() const {
    return std::visit([](const auto& s) { return std::string_view(std::decay_t<decltype(s)>::kName); }, shape);
  }
};

// std::visit with one lambda per kind. Use no catch-all lambda: a kind without a lambda must not
// compile. Kinds that share a behaviour share a lambda through OneOf:
//   [](const OneOf<IntSpec, PartitionSpec, OffsetSpec> auto& s) { ... }
template <class... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};
template <class... Fs>
Overloaded(Fs...) -> Overloaded<Fs...>;

template <class T, class... Us>
concept OneOf = (std::same_as<std::remove_cvref_t<T>, Us> || ...);

template <class... Fs>
decltype(auto) visit_kind(const Component& c, Fs&&... fs) {
  return std::visit(Overloaded{std::forward<Fs>(fs)...}, c.shape);
}

// Number of distinct values of a salt or bucket component; 0 for every other kind.
inline std::int64_t lead_values(const Component& c) {
  if (const auto* s = c.as<SaltSpec>()) return s->lead_values();
  if (const auto* b = c.as<BucketSpec>()) return b->lead_values();
  return 0;
}

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
