// libFuzzer target: the SASL negotiation and frame reader (connectors/hbase/src/sasl_frame.h) on
// what a gateway might send. Input: one byte choosing how many bytes each read hands out (a
// socket's short reads: 1 to 8), one byte choosing the data frames' bound, then the stream:
// negotiation messages until one is not OK, then data frames.
// Properties: nothing crashes or throws but SaslFrameError; nothing is read past what a message
// or frame declares; no payload is larger than its bound (so nothing larger was allocated for it);
// every message read encodes back to the bytes it came from.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "sasl_frame.h"

namespace {

namespace sasl = hbingest::connectors::sasl;

void check(bool ok) {
  if (!ok) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 2) return 0;
  const std::size_t chunk = 1 + data[0] % 8;
  const std::size_t max_frame = std::size_t{1} << (data[1] % 20);  // 1 B .. 512 KiB
  const std::string_view stream(reinterpret_cast<const char*>(data + 2), size - 2);
  std::size_t pos = 0;
  const sasl::ByteSource source = [&](std::uint8_t* out, std::size_t want) {
    const std::size_t n = std::min({want, chunk, stream.size() - pos});
    std::memcpy(out, stream.data() + pos, n);
    pos += n;
    return n;
  };
  try {
    for (;;) {
      const std::size_t before = pos;
      const sasl::NegotiationMessage message = sasl::read_negotiation_message(source, "a step");
      check(message.payload.size() <= sasl::kMaxNegotiationPayloadBytes);
      check(pos - before == sasl::kNegotiationHeaderBytes + message.payload.size());
      check(sasl::encode_negotiation_message(message.status, message.payload) == stream.substr(before, pos - before));
      check(!sasl::status_name(message.status).empty() && sasl::status_name(message.status) != "?");
      if (message.status != sasl::NegotiationStatus::ok) break;
    }
    std::string payload;
    for (;;) {
      const std::size_t before = pos;
      sasl::read_data_frame(source, max_frame, payload);
      check(!payload.empty() && payload.size() <= max_frame);
      check(pos - before == sasl::kFrameHeaderBytes + payload.size());
      check(sasl::decode_frame_length(reinterpret_cast<const std::uint8_t*>(stream.data() + before)) == payload.size());
    }
  } catch (const sasl::SaslFrameError& e) {
    check(std::string_view(e.what()).size() < 1024);  // one line, not a dump of the input
  }
  check(pos <= stream.size());
  return 0;
}
