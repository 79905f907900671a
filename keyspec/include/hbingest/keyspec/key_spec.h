#pragma once
// KeySpec: a declarative HBase row-key layout (see docs/keyspec.md for the exact bytes).
//
// Pure: no I/O (except the explicit load-from-file helper), no clock, no globals. Everything that
// depends on time or Kafka metadata is passed in, so keys are a pure function of
// (event fields, Kafka metadata) and a replay produces identical keys.
//
// Thread safety: a KeySpec is immutable after construction; all const methods may be called
// concurrently from any number of threads.

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace YAML {
class Node;
}

namespace hbingest::keyspec {

// A JSON object or array in an event: present, but no component takes it ("wrong type").
struct NestedValue {
  friend bool operator==(const NestedValue&, const NestedValue&) = default;
};

// A value an event offers for a named field. monostate = JSON null.
using FieldValue = std::variant<std::monostate, bool, std::int64_t, double, std::string_view, NestedValue>;

// Read access to one decoded event. Returns nullopt when the field is absent.
// Implementations must keep returned string_views valid for the duration of one encode() call.
class EventFields {
 public:
  virtual ~EventFields() = default;
  virtual std::optional<FieldValue> field(std::string_view name) const = 0;
};

// A simple map-backed EventFields for tests and planners (JSON events: JsonEvent, json_event.h).
class MapEventFields final : public EventFields {
 public:
  using Value = std::variant<std::monostate, bool, std::int64_t, double, std::string>;
  MapEventFields() = default;
  explicit MapEventFields(std::map<std::string, Value, std::less<>> values) : values_(std::move(values)) {}
  void set(std::string name, Value value) { values_[std::move(name)] = std::move(value); }
  std::optional<FieldValue> field(std::string_view name) const override;

 private:
  std::map<std::string, Value, std::less<>> values_;
};

// Kafka metadata of the message an event came from.
struct KafkaMeta {
  std::string_view topic;
  std::int32_t partition = 0;
  std::int64_t offset = 0;
  std::int64_t timestamp_ms = -1;  // -1: the message carries no timestamp
};

// Why one event could not be turned into a key. Names the component and field.
struct KeyError {
  std::string component;        // component name in the spec
  std::string field;            // event field (or kafka metadata name) the component read; may be empty
  std::string reason;           // e.g. "missing", "too long for width 16 (got 23 bytes)", "unknown dict value 'x'"
  std::string message() const;  // "key component 'event' (field 'event_id'): missing"
};

// A spec that cannot be loaded, or a plan that cannot be made. A load reports every problem it
// finds, one per line of what(), each "<source>:<line>:<col>: <path>: <reason>" (line and path
// when known); problems() lists them one by one. A plan error is a single problem.
class SpecError : public std::runtime_error {
 public:
  explicit SpecError(const std::string& problem);
  explicit SpecError(std::vector<std::string> problems);  // at least one
  const std::vector<std::string>& problems() const noexcept { return *problems_; }

 private:
  std::shared_ptr<const std::vector<std::string>> problems_;  // shared: copying an exception must not throw
};

// Key bytes that do not decode under this spec.
class DecodeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// One decoded component of a key.
struct KeyPart {
  std::string name;  // component name
  std::string type;  // component type: salt, field, hash, reverse, time, int, bucket, dict, literal, partition, offset
  std::string
      text;  // human-readable value (hash → lowercase hex; time → RFC 3339 UTC with ms; dict → the original string)
  std::optional<std::int64_t> number;  // numeric value where it has one: salt/bucket index, int, partition, offset,
                                       // time in epoch ms (un-reversed)
  std::size_t begin = 0;               // byte range in the key
  std::size_t end = 0;
};

// The parts of a key that say when and where (Kafka) its event was: time, partition, offset.
struct SortKey {
  std::int64_t time_ms = 0;
  std::int32_t partition = 0;
  std::int64_t offset = 0;
  friend auto operator<=>(const SortKey&, const SortKey&) = default;
};

// [start, stop): start inclusive, stop exclusive, in HBase byte order. Empty stop = end of table.
struct ScanRange {
  std::string start;
  std::string stop;
  int bucket = -1;  // salt bucket this range covers, -1 when the spec has no salt
};

// What a query fixes: equality on a leading run of components (by component name; values as text,
// as a user would type them, e.g. {"event": "login"}), then optionally a half-open time range
// [from_ms, to_ms) on the time component that follows them.
struct PlanRequest {
  std::map<std::string, std::string, std::less<>> equals;
  std::optional<std::int64_t> from_ms;
  std::optional<std::int64_t> to_ms;
};

struct ComponentInfo {
  std::string name;
  std::string type;
  std::string source;                // "field:event_id", "kafka:offset", ...
  std::vector<std::string> fields;   // the event field names it reads (EventFields::field), in order
  std::optional<std::size_t> width;  // fixed width in bytes, nullopt when variable
};

// Lowercase hex of key bytes: how hash components decode and how tools and the query API print keys.
std::string to_hex(std::string_view bytes);

class KeySpec {
 public:
  // Loaders. `source_name` is used in error messages ("config.yaml", "preset:events").
  static KeySpec from_yaml_text(std::string_view yaml, std::string_view source_name);
  static KeySpec from_yaml_file(const std::filesystem::path& path);
  // A node inside a larger YAML document (the daemon config). Errors carry the node's line.
  static KeySpec from_yaml_node(const YAML::Node& node, std::string_view source_name);
  // Built-in presets reproducing the design notes: events, order_status, user_history, timeline,
  // follows, consumption, logs, logs_fixed. `params` override documented preset parameters
  // (e.g. {"buckets": "100", "event_field": "event_id", "time_field": "ts"}).
  static KeySpec preset(std::string_view name, const std::map<std::string, std::string, std::less<>>& params = {});
  static std::vector<std::string> preset_names();

  KeySpec(const KeySpec&);
  KeySpec& operator=(const KeySpec&);
  KeySpec(KeySpec&&) noexcept;
  KeySpec& operator=(KeySpec&&) noexcept;
  ~KeySpec();

  // Encodes the key into `out` (cleared first; its capacity is reused so steady state does not
  // allocate). Returns the error instead of throwing: a bad event is data, not a bug.
  std::optional<KeyError> encode(const EventFields& event, const KafkaMeta& meta, std::string& out) const;

  // Splits key bytes into named parts. Throws DecodeError.
  std::vector<KeyPart> decode(std::string_view key) const;
  // Time/partition/offset of a key; nullopt when the spec lacks a time component. Missing
  // partition/offset components read as 0. Not the merge order: see merge_bytes().
  std::optional<SortKey> sort_key(std::string_view key) const;
  // What the n-way reader's time-ordered merge compares: the key from its time component to its end
  // (nullopt when the spec has no time component). A planned range fixes every byte before the time
  // component, so within one range the byte order of these bytes is exactly HBase's scan order, for
  // every component that may follow the time; across ranges they order by time first, since every
  // time component a spec can name has a fixed width and an order-preserving encoding (or reversing,
  // see time_descending()). Throws DecodeError when the key is too short or its time is malformed.
  std::optional<std::string_view> merge_bytes(std::string_view key) const;
  // True when the time component stores Long.MAX_VALUE - ms (`reversed: true`): keys, and
  // merge_bytes(), ascend as time descends, so the oldest rows come first from a reversed scan.
  bool time_descending() const;

  // One range per salt bucket (or one range when unsalted). Throws SpecError naming the reason
  // when the request cannot be planned (e.g. the range component follows a hash of unknown input).
  std::vector<ScanRange> plan(const PlanRequest& request) const;
  // The whole table cut into `splits` contiguous ranges (by salt bucket when salted).
  std::vector<ScanRange> plan_full_table(int splits) const;
  // Region split points for a table pre-split at salt bucket boundaries (buckets-1 keys).
  std::vector<std::string> split_keys() const;

  int salt_buckets() const;  // 1 when unsalted
  // The salt (or bucket) index a key starts with, read without decoding the rest (per-bucket write
  // metrics on the hot path); nullopt when the spec does not lead with one. Throws DecodeError.
  std::optional<int> lead_bucket(std::string_view key) const;
  std::size_t max_key_length() const;
  const std::vector<ComponentInfo>& components() const;
  // Name of the component that holds the event type (first dict/field component named in
  // `event_component` of the spec, default the first field/dict component), if any.
  std::optional<std::string> event_component() const;
  // Name of the time component used for range plans, if any.
  std::optional<std::string> time_component() const;
  // Load-time warnings (e.g. random salt makes replays duplicate rows).
  const std::vector<std::string>& warnings() const;
  std::string_view source_name() const;

 private:
  struct Impl;
  explicit KeySpec(std::shared_ptr<const Impl> impl);
  std::shared_ptr<const Impl> impl_;
};

}  // namespace hbingest::keyspec
