#pragma once
// The inputs of one decoded Kafka message, by the grammar of input_name.h: value paths, the key
// (raw or decoded by its key format), headers and metadata. What EventDecoder::fields() gives the
// key spec (which asks by name, EventFields::field) and a row mapping (which parses its names once
// and asks with InputName).
//
// Views stay valid until the decoder's next decode, and while the message it decoded lives.
// Not thread-safe: the decoder's thread only.

#include <optional>
#include <string>
#include <string_view>

#include "hbingest/event_formats/input_name.h"
#include "hbingest/event_formats/record.h"
#include "hbingest/keyspec/key_spec.h"

namespace hbingest::event_formats {

class MessageFields : public keyspec::EventFields {
 public:
  // `name` in the input grammar. A plain top-level name is read without parsing; others are
  // parsed once and kept (a bounded number: past it, parsed on each call). A name that does not
  // parse reads as absent (check-config rejects it).
  std::optional<keyspec::FieldValue> field(std::string_view name) const override = 0;

  // The input's value: absent (nullopt) when the message has no such input (a missing field, no
  // header of that name, no timestamp, a value path of a tombstone, a key that did not decode);
  // null (monostate) for a null field, a null header value, a null key or a tombstone's
  // kafka:value. The key in text or bytes format and raw bytes read as strings.
  virtual std::optional<keyspec::FieldValue> input(const InputName& name) const = 0;
  // Appends the input as cell text (Record::append_text's rendering; a whole decoded key as compact
  // JSON); false when absent.
  virtual bool append_text(const InputName& name, std::string& out) const = 0;
  // Record::visit_members on the value (a value path) or the decoded key (key, key.<path>): false
  // for other inputs and where there is no record.
  virtual bool visit_members(const InputName& name, Record::MemberVisitor& visit) const = 0;
};

}  // namespace hbingest::event_formats
