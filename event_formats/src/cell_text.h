#pragma once
// The text a cell holds, written the same way by every input format (docs/formats.md, "From fields
// to cells"): a top-level float (append_double) and nested values as compact JSON (CellTextFormatter,
// byte for byte what simdjson::minify writes), so a query answers the same for the same event
// whether it came as JSON, Avro or Protobuf.

#include <openssl/evp.h>
#include <simdjson.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace hbingest::event_formats {

// Appends an integer in decimal.
template <typename Integer>
void append_integer(Integer value, std::string& out) {
  char buffer[24];
  out.append(buffer, std::to_chars(buffer, buffer + sizeof(buffer), value).ptr);
}

// Appends `bytes` as standard base64 with padding (Protobuf's JSON form of bytes).
inline void append_base64(std::string_view bytes, std::string& out) {
  const std::size_t start = out.size();
  out.resize(start + 4 * ((bytes.size() + 2) / 3) + 1);  // EVP_EncodeBlock ends it with a NUL
  const int written =
      EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data() + start),
                      reinterpret_cast<const unsigned char*>(bytes.data()), static_cast<int>(bytes.size()));
  out.resize(start + static_cast<std::size_t>(written));
}

// Appends `value` as the shortest text that reads back to it, an integral one with ".0" (see
// append_text). std::to_chars(double) finds the shortest digits in general, at ~600 instructions a
// call, a tenth of an order's decode (callgrind, bench/README.md). Most doubles in events are
// amounts with at most 3 decimals: for those the shortest text is the integer m = x * 10^k for the
// least k in 0..3 with m / 10^k == x, written with k decimals. Why that is what to_chars writes:
// below 1e5 a double's spacing is under 1.5e-11, far below the 0.001 between two texts of 3
// decimals, so at most one k-decimal text reads back to x, and fewer decimals is fewer digits; and
// with at most 3 decimals below 1e5 the fixed form is never longer than the exponent form, where
// to_chars prefers the fixed one. The division is exact to the last bit as a parser's is (m and
// 10^k are exact doubles, and IEEE division rounds correctly), so the test is the round trip
// itself. Everything else goes to to_chars.
inline void append_double(double value, std::string& out) {
  constexpr double kPowers[] = {1.0, 10.0, 100.0, 1000.0};
  const double magnitude = value < 0 ? -value : value;
  if (magnitude < 1e5 && magnitude > 0) {  // not 0, -0, NaN or infinite
    for (int k = 0; k < 4; ++k) {
      const auto scaled = std::llround(magnitude * kPowers[k]);
      if (static_cast<double>(scaled) / kPowers[k] != magnitude) continue;
      char buffer[16];
      char* end = buffer + sizeof(buffer);
      char* at = end;
      auto digits = static_cast<std::uint64_t>(scaled);
      for (int i = 0; i < k; ++i) {  // the k decimals, zeros kept
        *--at = static_cast<char>('0' + digits % 10);
        digits /= 10;
      }
      if (k > 0) *--at = '.';
      do {
        *--at = static_cast<char>('0' + digits % 10);
        digits /= 10;
      } while (digits != 0);
      if (value < 0) *--at = '-';
      out.append(at, end);
      if (k == 0) out += ".0";
      return;
    }
  }
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof(buffer), value);
  const auto text = std::string_view(buffer, static_cast<std::size_t>(result.ptr - buffer));
  out.append(text);
  if (text.find_first_of(".eEni") == std::string_view::npos) out += ".0";
}

// A formatter for simdjson's string_builder, which walks an object or array on the parsed tape.
// It writes what simdjson's own mini_formatter writes (simdjson::minify), byte for byte: the
// escapes, the numbers' text (simdjson's to_chars for doubles). It exists because mini_formatter
// appends every token with std::vector::insert, a general insert-in-the-middle that cost ~40 % of
// minifying an order's `items` (callgrind, bench/README.md). Here each token makes room once and is
// then stored through a pointer. The test NestedTextIsSimdjsonMinifyEverywhere holds the two to the
// same bytes.
class CellTextFormatter {
 public:
  void comma() { put(','); }
  void start_array() { put('['); }
  void end_array() { put(']'); }
  void start_object() { put('{'); }
  void end_object() { put('}'); }
  void true_atom() { put("true"); }
  void false_atom() { put("false"); }
  void null_atom() { put("null"); }
  void number(std::int64_t x) { append_integer(x); }
  void number(std::uint64_t x) { append_integer(x); }
  void number(double x) {
    // simdjson's to_chars writes at most 24 bytes and, as its own formatter does, is given no end.
    char* at = room(32);
    used_ += static_cast<std::size_t>(simdjson::internal::to_chars(at, nullptr, x) - at);
  }
  void key(std::string_view unescaped) {
    string(unescaped);
    put(':');
  }
  void string(std::string_view unescaped) {
    // Most strings (every name and value of an order's items) need no escape, and are short: each
    // byte is copied as it is checked, which is cheaper than a call to memcpy after the scan.
    char* at = room(unescaped.size() + 2) + 1;
    at[-1] = '"';
    std::size_t plain = 0;
    for (; plain < unescaped.size() && !needs_escape(unescaped[plain]); ++plain) at[plain] = unescaped[plain];
    used_ += 1 + plain;
    if (plain < unescaped.size()) put_escaped(unescaped.substr(plain));
    put('"');
  }
  // Text that is JSON already (a key quoted once for every message of its type), as it is.
  void raw(std::string_view json) { put(json); }
  void clear() { used_ = 0; }
  // What is written so far, and going back to an earlier size of it (a value begun and given up).
  std::size_t size() const { return used_; }
  void truncate(std::size_t size) { used_ = std::min(used_, size); }
  std::string_view str() const { return {buffer_.data(), used_}; }

 private:
  // A table rather than three comparisons: the scan is a third of minifying an order's items.
  static constexpr auto kNeedsEscape = [] {
    std::array<bool, 256> table{};
    for (int byte = 0; byte < 0x20; ++byte) table[static_cast<std::size_t>(byte)] = true;
    table['"'] = table['\\'] = true;
    return table;
  }();
  static bool needs_escape(char c) { return kNeedsEscape[static_cast<unsigned char>(c)]; }
  // Room for n more bytes at the end of what is written.
  char* room(std::size_t n) {
    if (used_ + n > buffer_.size()) [[unlikely]]
      grow(used_ + n);
    return buffer_.data() + used_;
  }
  // The buffer only grows, and is kept between values: after the first few events it has room.
  [[gnu::noinline]] void grow(std::size_t size) { buffer_.resize(std::max(2 * buffer_.size(), size)); }
  void put(char c) {
    *room(1) = c;
    ++used_;
  }
  void put(std::string_view text) {
    std::memcpy(room(text.size()), text.data(), text.size());
    used_ += text.size();
  }
  // The rest of a string from its first byte that needs an escape.
  [[gnu::noinline]] void put_escaped(std::string_view text) {
    std::size_t plain = 0;  // where the run of bytes that need no escape began
    for (std::size_t i = 0; i < text.size(); ++i) {
      if (!needs_escape(text[i])) continue;
      put(text.substr(plain, i - plain));
      plain = i + 1;
      put_escape(static_cast<unsigned char>(text[i]));
    }
    put(text.substr(plain));
  }
  template <typename Integer>
  void append_integer(Integer x) {
    char* at = room(24);
    used_ += static_cast<std::size_t>(std::to_chars(at, at + 24, x).ptr - at);
  }
  // JSON's short escapes where there is one, a six-byte \u escape with lower-case hex for the other
  // control bytes.
  void put_escape(unsigned char c) {
    switch (c) {
      case '"':
        return put("\\\"");
      case '\\':
        return put("\\\\");
      case '\b':
        return put("\\b");
      case '\t':
        return put("\\t");
      case '\n':
        return put("\\n");
      case '\f':
        return put("\\f");
      case '\r':
        return put("\\r");
      default: {
        constexpr char kHex[] = "0123456789abcdef";
        const char escape[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 0xF]};
        return put(std::string_view(escape, sizeof(escape)));
      }
    }
  }

  std::string buffer_;  // its size is the room there is; used_ of it is written
  std::size_t used_ = 0;
};

}  // namespace hbingest::event_formats
