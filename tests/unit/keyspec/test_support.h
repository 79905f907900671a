#pragma once
// Helpers shared by the keyspec unit tests.

#include <string>
#include <string_view>

#include "hbingest/keyspec/key_spec.h"

namespace hbingest::keyspec::testing {

inline std::string to_hex(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  for (const char c : bytes) {
    s += kHex[static_cast<unsigned char>(c) >> 4];
    s += kHex[static_cast<unsigned char>(c) & 15];
  }
  return s;
}

inline std::string from_hex(std::string_view hex) {
  std::string out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    out += static_cast<char>(std::stoi(std::string(hex.substr(i, 2)), nullptr, 16));
  return out;
}

// 8-byte big-endian.
inline std::string be64(std::uint64_t v) {
  std::string s(8, '\0');
  for (int i = 7; i >= 0; --i) {
    s[static_cast<std::size_t>(i)] = static_cast<char>(v & 0xff);
    v >>= 8;
  }
  return s;
}

inline std::string encode_or_throw(const KeySpec& spec, const EventFields& event, const KafkaMeta& meta = {}) {
  std::string key;
  if (const auto err = spec.encode(event, meta, key)) throw std::runtime_error(err->message());
  return key;
}

}  // namespace hbingest::keyspec::testing
