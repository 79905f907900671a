#pragma once
// Test helper: a Record's field as the text a key or a text cell gets.

#include <cstddef>
#include <string>

#include "hbingest/event_formats/record.h"

namespace hbingest::testing {

inline std::string text_of(const event_formats::Record& record, std::size_t i) {
  std::string text;
  record.append_text(i, text);
  return text;
}

}  // namespace hbingest::testing
