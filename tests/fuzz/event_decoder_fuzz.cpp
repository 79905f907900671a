// libFuzzer target: Kafka payload bytes → EventDecoder → the events preset's key, as the pipeline does.
// Input: one byte choosing the decode options and Kafka metadata, then the payload.
// Properties: nothing crashes or throws; a rejected payload is an InvalidEvent with a reason; an
// accepted one has a cell time in 1970..9999, and when its key encodes, the key decodes to the same
// event type and time as the cells (decode.time_format auto, as the preset's `input: auto`).
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "hbingest/config/config.h"
#include "hbingest/event_formats/event_decoder.h"
#include "hbingest/keyspec/key_spec.h"
#include "hbingest/routing/row_mapping.h"

namespace {

using hbingest::config::ColumnsMode;
using hbingest::config::DecodeConfig;
using hbingest::config::TimeFormat;
using hbingest::event_formats::DecodedEvent;
using hbingest::event_formats::EventDecoder;

constexpr std::int64_t kMaxCellTimeMs = 253402300799999;  // 9999-12-31T23:59:59.999Z

void check(bool ok) {
  if (!ok) std::abort();
}

DecodeConfig decode_config(std::uint8_t options) {
  DecodeConfig config;
  config.time_format = static_cast<TimeFormat>(options & 3);
  config.columns = static_cast<ColumnsMode>((options >> 2) % 3);
  config.kafka_time_fallback = (options & 16) != 0;
  config.write_null_fields = (options & 32) != 0;
  if (options & 64) config.ttl_field = "ttl";
  config.max_event_bytes = 4096;
  return config;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::uint8_t options = data[0];
  static EventDecoder* decoders[128] = {};  // one per option set, as each pipeline thread keeps one
  EventDecoder*& decoder = decoders[options & 127];
  if (decoder == nullptr) decoder = new EventDecoder(decode_config(options));
  static const hbingest::keyspec::KeySpec kEvents = hbingest::keyspec::KeySpec::preset("events");

  const std::string payload(reinterpret_cast<const char*>(data) + 1, size - 1);
  const hbingest::event_formats::MessageView message{"events", payload, (options & 128) ? 1700000000123 : -1};
  const std::int32_t partition = options & 7;
  const auto offset = static_cast<std::int64_t>(size) * 1000;

  DecodedEvent event;
  if (const auto invalid = decoder->decode(message, event)) {
    check(!invalid->reason.empty() && !invalid->message.empty());
    return 0;
  }
  check(event.time_ms >= 0 && event.time_ms <= kMaxCellTimeMs);
  // The default row mapping of the same options writes the event (a raw cell at least, unless fields only).
  static hbingest::routing::RowMapping* mappings[128] = {};
  hbingest::routing::RowMapping*& mapping = mappings[options & 127];
  if (mapping == nullptr)
    mapping = new hbingest::routing::RowMapping(hbingest::routing::RowMapping::from_decode(decode_config(options)));
  hbingest::routing::RowCells cells;
  check(!mapping->apply({decoder->record(), &decoder->fields(), payload}, cells));
  check(!cells.cells.empty() || decode_config(options).columns == ColumnsMode::fields);
  if (event.ttl_ms) check(*event.ttl_ms > 0);

  const hbingest::keyspec::KafkaMeta meta{message.topic, partition, offset, message.timestamp_ms};
  std::string key;
  if (kEvents.encode(decoder->fields(), meta, key)) return 0;
  const auto parts = kEvents.decode(key);  // a key we just built must decode: DecodeError escapes as a crash
  check(parts.size() == 5);
  check(parts[1].text == event.event_type);
  if (decode_config(options).time_format == TimeFormat::auto_detect) check(parts[2].number == event.time_ms);
  check(parts[3].number == partition && parts[4].number == offset);
  return 0;
}
