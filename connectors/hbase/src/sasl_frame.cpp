#include "sasl_frame.h"

#include <array>
#include <cstdio>

namespace hbingest::connectors::sasl {

namespace {

std::uint32_t big_endian_32(const std::uint8_t* bytes) {
  return (std::uint32_t{bytes[0]} << 24) | (std::uint32_t{bytes[1]} << 16) | (std::uint32_t{bytes[2]} << 8) |
         std::uint32_t{bytes[3]};
}

// Fills `out` completely, or throws naming `what` and how far it got.
void read_exactly(const ByteSource& source, std::uint8_t* out, std::size_t size, std::string_view what,
                  std::string_view step) {
  std::size_t got = 0;
  while (got < size) {
    const std::size_t n = source(out + got, size - got);
    if (n == 0) {
      throw SaslFrameError("the gateway closed the connection while hbingest waited for " + std::string(step) + " (" +
                           std::to_string(got) + " of the " + std::to_string(size) + " bytes of " + std::string(what) +
                           ")");
    }
    got += n;
  }
}

}  // namespace

std::string_view status_name(NegotiationStatus status) {
  switch (status) {
    case NegotiationStatus::start:
      return "START";
    case NegotiationStatus::ok:
      return "OK";
    case NegotiationStatus::bad:
      return "BAD";
    case NegotiationStatus::error:
      return "ERROR";
    case NegotiationStatus::complete:
      return "COMPLETE";
  }
  return "?";
}

NegotiationMessage read_negotiation_message(const ByteSource& source, std::string_view step) {
  std::array<std::uint8_t, kNegotiationHeaderBytes> header{};
  read_exactly(source, header.data(), header.size(), "a SASL message header", step);
  const std::uint8_t status = header[0];
  if (status < static_cast<std::uint8_t>(NegotiationStatus::start) ||
      status > static_cast<std::uint8_t>(NegotiationStatus::complete)) {
    std::array<char, 8> hex{};
    std::snprintf(hex.data(), hex.size(), "0x%02x", status);
    throw SaslFrameError("not a SASL negotiation message while hbingest waited for " + std::string(step) +
                         ": status byte " + hex.data() + " (SASL statuses are 1 to 5)");
  }
  const std::uint32_t length = big_endian_32(header.data() + 1);
  if (length > kMaxNegotiationPayloadBytes) {
    throw SaslFrameError("SASL message of " + std::to_string(length) + " bytes while hbingest waited for " +
                         std::string(step) + ": above the " + std::to_string(kMaxNegotiationPayloadBytes) +
                         " bytes any negotiation message takes, refused unread");
  }
  NegotiationMessage message;
  message.status = static_cast<NegotiationStatus>(status);
  message.payload.resize(length);
  read_exactly(source, reinterpret_cast<std::uint8_t*>(message.payload.data()), length,
               "a " + std::string(status_name(message.status)) + " payload", step);
  return message;
}

void read_data_frame(const ByteSource& source, std::size_t max_frame_bytes, std::string& payload) {
  std::array<std::uint8_t, kFrameHeaderBytes> header{};
  read_exactly(source, header.data(), header.size(), "a SASL frame length", "a reply");
  const std::uint32_t length = big_endian_32(header.data());
  if (length == 0) throw SaslFrameError("empty SASL frame from the gateway (Thrift's SASL transport never sends one)");
  if (length > max_frame_bytes) {
    throw SaslFrameError("SASL frame of " + std::to_string(length) + " bytes from the gateway: above the " +
                         std::to_string(max_frame_bytes) + " bytes this connection reads, refused unread");
  }
  payload.resize(length);
  read_exactly(source, reinterpret_cast<std::uint8_t*>(payload.data()), length, "a SASL frame", "a reply");
}

std::string encode_negotiation_message(NegotiationStatus status, std::string_view payload) {
  std::string out;
  out.reserve(kNegotiationHeaderBytes + payload.size());
  out.push_back(static_cast<char>(status));
  std::uint8_t length[kFrameHeaderBytes];
  encode_frame_length(static_cast<std::uint32_t>(payload.size()), length);
  out.append(reinterpret_cast<const char*>(length), kFrameHeaderBytes);
  out.append(payload);
  return out;
}

void encode_frame_length(std::uint32_t length, std::uint8_t out[kFrameHeaderBytes]) {
  out[0] = static_cast<std::uint8_t>(length >> 24);
  out[1] = static_cast<std::uint8_t>(length >> 16);
  out[2] = static_cast<std::uint8_t>(length >> 8);
  out[3] = static_cast<std::uint8_t>(length);
}

std::uint32_t decode_frame_length(const std::uint8_t in[kFrameHeaderBytes]) { return big_endian_32(in); }

std::string printable(std::string_view text, std::size_t max_chars) {
  std::string out;
  for (const char c : text) {
    if (out.size() >= max_chars) {
      out += "...";
      break;
    }
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7f) {
      out.push_back(c);
    } else {
      std::array<char, 5> hex{};
      std::snprintf(hex.data(), hex.size(), "\\x%02x", byte);
      out += hex.data();
    }
  }
  return out;
}

}  // namespace hbingest::connectors::sasl
