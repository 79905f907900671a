#pragma once
// A value quoted into an error message: bounded and printable, since the value comes from a client
// (a query string) or a shell, and the message goes back to it, into a JSON body or a terminal.

#include <cstddef>
#include <string>
#include <string_view>

namespace hbingest::query::detail {

inline constexpr std::size_t kQuotedBytes = 64;

// "'abc'"; bytes outside printable ASCII as \xHH; longer values cut at kQuotedBytes with "...".
inline std::string quote_bounded(std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "'";
  for (std::size_t i = 0; i < text.size() && i < kQuotedBytes; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += kHex[c >> 4];
      out += kHex[c & 0xf];
    }
  }
  out += text.size() > kQuotedBytes ? "'..." : "'";
  return out;
}

}  // namespace hbingest::query::detail
