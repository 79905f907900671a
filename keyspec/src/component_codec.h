#pragma once
// Encoding and decoding of single key components (see docs/keyspec.md for the exact bytes).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "hbingest/keyspec/key_spec.h"
#include "spec_model.h"

namespace hbingest::keyspec::detail {

// Appends component `c` of the key for this event. Never throws for bad event data.
std::optional<KeyError> encode_component(const Component& c, const EventFields& event, const KafkaMeta& meta,
                                         std::string& out);

// The salt/bucket index of an event (0 .. lead_values-1). `c` must be a salt or bucket.
std::optional<KeyError> lead_value(const Component& c, const EventFields& event, const KafkaMeta& meta,
                                   std::int64_t& value);
// Appends the bytes of salt/bucket index `value`. `c` must be a salt or bucket.
void append_lead(const Component& c, std::int64_t value, std::string& out);

// Appends time `ms` as time component `t` stores it (reversal included). Returns the reason on failure.
std::string_view append_time(const TimeSpec& t, std::int64_t ms, std::string& out);
// Appends an already-reversed stored value (Long.MAX_VALUE - ms) of a binary/decimal time component.
void append_stored_time(const TimeSpec& t, std::int64_t stored, std::string& out);

// Number of bytes component `c` occupies at `pos` of `key`. Throws DecodeError.
std::size_t component_extent(const Component& c, std::string_view key, std::size_t pos);
// Decodes the component's bytes key[begin, end). Throws DecodeError.
KeyPart decode_component(const Component& c, std::string_view key, std::size_t begin, std::size_t end);
// The number a component's bytes hold (salt/bucket index, int, partition, offset, un-reversed time
// ms); nullopt when the bytes are malformed or the component has no number.
std::optional<std::int64_t> decode_number(const Component& c, std::string_view bytes);

// Value of `source` in the event or Kafka metadata; nullopt when absent.
std::optional<FieldValue> read_source(const Source& source, const EventFields& event, const KafkaMeta& meta);

}  // namespace hbingest::keyspec::detail
