#include "hbingest/query/time_arg.h"

#include <stdexcept>
#include <string>

#include "hbingest/keyspec/time_text.h"
#include "quote_bounded.h"

namespace hbingest::query {

std::int64_t parse_time_arg(std::string_view text) {
  if (text.empty()) throw std::invalid_argument("empty time");
  if (const auto ms = keyspec::parse_instant_ms(text)) return *ms;
  throw std::invalid_argument(detail::quote_bounded(text) +
                              " is neither epoch milliseconds nor RFC 3339 (2024-05-01T12:00:00Z, +hh:mm offsets)");
}

}  // namespace hbingest::query
