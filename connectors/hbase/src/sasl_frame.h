#pragma once
// The bytes of Thrift's SASL transport (Java's TSaslTransport, which HBase's Thrift servers use):
// negotiation messages, 1 status byte + 4-byte big-endian length + payload, then data frames,
// 4-byte big-endian length + payload. Pure: reads through a ByteSource, so the same reader runs on
// a socket, in tests and under the fuzzer.
//
// Every length is checked against its bound BEFORE anything is allocated for it: a peer that sends
// a length of 2 GiB costs four bytes of reading and an error, never an allocation.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace hbingest::connectors::sasl {

enum class NegotiationStatus : std::uint8_t { start = 1, ok = 2, bad = 3, error = 4, complete = 5 };

std::string_view status_name(NegotiationStatus status);

// What the reader refuses: a truncated stream, a length above its bound, an unknown status byte.
class SaslFrameError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Reads up to `size` bytes into `out`; returns how many (0: the peer closed the connection).
using ByteSource = std::function<std::size_t(std::uint8_t* out, std::size_t size)>;

// Negotiation messages from the gateway are a Kerberos AP-REP, a wrapped 4-byte security-layer
// offer, or a failure text: a few hundred bytes. 64 KiB leaves room for any real one.
inline constexpr std::size_t kMaxNegotiationPayloadBytes = 64 * 1024;
inline constexpr std::size_t kNegotiationHeaderBytes = 5;
inline constexpr std::size_t kFrameHeaderBytes = 4;

struct NegotiationMessage {
  NegotiationStatus status = NegotiationStatus::ok;
  std::string payload;
};

// One negotiation message. `step` names what was being waited for ("the answer to SASL START"),
// for the messages: a stream that ends early, an unknown status byte or a payload above
// kMaxNegotiationPayloadBytes throws SaslFrameError naming it. BAD and ERROR are returned, not
// thrown: their payload is the gateway's message, for the caller to report.
NegotiationMessage read_negotiation_message(const ByteSource& source, std::string_view step);

// One data frame's payload, replacing `payload`'s contents. A length above `max_frame_bytes`, a
// zero length (Java never sends an empty frame: it would read as a closed stream) or a stream that
// ends inside the frame throws SaslFrameError.
void read_data_frame(const ByteSource& source, std::size_t max_frame_bytes, std::string& payload);

// The bytes of one negotiation message (status, length, payload).
std::string encode_negotiation_message(NegotiationStatus status, std::string_view payload);
// A data frame's 4-byte big-endian length, written and read.
void encode_frame_length(std::uint32_t length, std::uint8_t out[kFrameHeaderBytes]);
std::uint32_t decode_frame_length(const std::uint8_t in[kFrameHeaderBytes]);

// `text` made printable for a one-line message: control and non-ASCII bytes as \xNN, cut after
// `max_chars` with "...". The gateway's BAD/ERROR text is shown through it.
std::string printable(std::string_view text, std::size_t max_chars = 300);

}  // namespace hbingest::connectors::sasl
