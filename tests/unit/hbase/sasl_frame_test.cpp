// The SASL negotiation and frame reader on hostile bytes: every length is refused before it is
// allocated, a stream that ends early names the step, an unknown status is refused.
#include "sasl_frame.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>

namespace hbingest::connectors::sasl {
namespace {

// A ByteSource over `bytes`, handing out at most `chunk` bytes per read (a socket's short reads).
struct Bytes {
  explicit Bytes(std::string data, std::size_t chunk_size = 3) : bytes(std::move(data)), chunk(chunk_size) {}
  std::string bytes;
  std::size_t chunk;
  std::size_t pos = 0;
  ByteSource source() {
    return [this](std::uint8_t* out, std::size_t size) {
      const std::size_t n = std::min({size, chunk, bytes.size() - pos});
      std::memcpy(out, bytes.data() + pos, n);
      pos += n;
      return n;
    };
  }
};

std::string header(std::uint8_t status, std::uint32_t length) {
  std::string out(1, static_cast<char>(status));
  std::uint8_t be[4];
  encode_frame_length(length, be);
  out.append(reinterpret_cast<const char*>(be), 4);
  return out;
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const SaslFrameError& e) {
    return e.what();
  }
  ADD_FAILURE() << "no SaslFrameError";
  return "";
}

TEST(SaslFrame, ReadsWhatItWrites) {
  Bytes in(encode_negotiation_message(NegotiationStatus::ok, "token\x01\x02") +
           encode_negotiation_message(NegotiationStatus::complete, ""));
  const auto first = read_negotiation_message(in.source(), "step one");
  EXPECT_EQ(first.status, NegotiationStatus::ok);
  EXPECT_EQ(first.payload, "token\x01\x02");
  const auto second = read_negotiation_message(in.source(), "step two");
  EXPECT_EQ(second.status, NegotiationStatus::complete);
  EXPECT_EQ(second.payload, "");
  EXPECT_EQ(in.pos, in.bytes.size());
}

TEST(SaslFrame, BadAndErrorAreReturnedWithTheGatewaysText) {
  Bytes in(encode_negotiation_message(NegotiationStatus::bad, "GSS initiate failed"));
  const auto message = read_negotiation_message(in.source(), "the answer to SASL START");
  EXPECT_EQ(message.status, NegotiationStatus::bad);
  EXPECT_EQ(message.payload, "GSS initiate failed");
}

TEST(SaslFrame, NegotiationLengthsAboveTheBoundAreRefusedUnread) {
  for (const std::uint32_t length :
       {std::uint32_t{kMaxNegotiationPayloadBytes + 1}, std::uint32_t{1} << 31, std::uint32_t{0xffffffff}}) {
    // Only the header is there: a reader that trusted the length would wait or allocate first.
    Bytes in(header(2, length));
    const std::string message = error_of([&] { read_negotiation_message(in.source(), "the answer to SASL START"); });
    EXPECT_NE(message.find("SASL message of " + std::to_string(length) + " bytes"), std::string::npos) << message;
    EXPECT_NE(message.find("refused unread"), std::string::npos) << message;
    EXPECT_EQ(in.pos, kNegotiationHeaderBytes) << "nothing read past the header";
  }
  Bytes at_bound(header(2, kMaxNegotiationPayloadBytes) + std::string(kMaxNegotiationPayloadBytes, 'x'));
  EXPECT_EQ(read_negotiation_message(at_bound.source(), "s").payload.size(), kMaxNegotiationPayloadBytes);
}

TEST(SaslFrame, UnknownStatusBytesAreRefused) {
  for (const std::uint8_t status : {0, 6, 0x48, 0x80, 0xff}) {
    Bytes in(header(status, 0));
    const std::string message = error_of([&] { read_negotiation_message(in.source(), "the answer to SASL START"); });
    EXPECT_NE(message.find("not a SASL negotiation message"), std::string::npos) << message;
    EXPECT_NE(message.find("the answer to SASL START"), std::string::npos) << message;
  }
}

TEST(SaslFrame, TruncatedStreamsNameTheStepAndHowFarTheyGot) {
  const std::string whole = encode_negotiation_message(NegotiationStatus::ok, "0123456789");
  for (std::size_t cut = 0; cut < whole.size(); ++cut) {
    Bytes in(whole.substr(0, cut));
    const std::string message =
        error_of([&] { read_negotiation_message(in.source(), "the gateway's answer to GSSAPI step 1"); });
    EXPECT_NE(message.find("closed the connection while hbingest waited for the gateway's answer to GSSAPI step 1"),
              std::string::npos)
        << message;
    const std::string expected =
        cut < kNegotiationHeaderBytes
            ? std::to_string(cut) + " of the 5 bytes of a SASL message header"
            : std::to_string(cut - kNegotiationHeaderBytes) + " of the 10 bytes of a OK payload";
    EXPECT_NE(message.find(expected), std::string::npos) << message;
  }
}

TEST(SaslFrame, DataFramesAreBoundedBeforeTheyAreRead) {
  std::uint8_t be[4];
  std::string payload;
  for (const std::uint32_t length : {std::uint32_t{1025}, std::uint32_t{1} << 31, std::uint32_t{0xffffffff}}) {
    encode_frame_length(length, be);
    Bytes in(std::string(reinterpret_cast<const char*>(be), 4));
    const std::string message = error_of([&] { read_data_frame(in.source(), 1024, payload); });
    EXPECT_NE(message.find("SASL frame of " + std::to_string(length) + " bytes"), std::string::npos) << message;
    EXPECT_NE(message.find("above the 1024 bytes"), std::string::npos) << message;
    EXPECT_LT(payload.capacity(), 1024u) << "nothing allocated for it";
  }
  encode_frame_length(0, be);
  Bytes empty(std::string(reinterpret_cast<const char*>(be), 4));
  EXPECT_NE(error_of([&] { read_data_frame(empty.source(), 1024, payload); }).find("empty SASL frame"),
            std::string::npos);

  encode_frame_length(10, be);
  Bytes truncated(std::string(reinterpret_cast<const char*>(be), 4) + "abc");
  EXPECT_NE(error_of([&] {
              read_data_frame(truncated.source(), 1024, payload);
            }).find("closed the connection while hbingest waited for a reply (3 of the 10 bytes of a SASL frame)"),
            std::string::npos);

  Bytes whole(std::string(reinterpret_cast<const char*>(be), 4) + "0123456789");
  read_data_frame(whole.source(), 10, payload);
  EXPECT_EQ(payload, "0123456789") << "a frame of exactly the bound";
  EXPECT_EQ(decode_frame_length(be), 10u);
}

TEST(SaslFrame, PrintableQuotesControlBytesAndCuts) {
  EXPECT_EQ(printable(std::string("ok\x00\n\xff", 5)), "ok\\x00\\x0a\\xff");
  EXPECT_EQ(printable(std::string(400, 'a'), 10), std::string(10, 'a') + "...");
}

}  // namespace
}  // namespace hbingest::connectors::sasl
