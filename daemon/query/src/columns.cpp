#include "hbingest/query/columns.h"

#include <stdexcept>

namespace hbingest::query {

std::vector<std::string> parse_columns(std::string_view text, const EventRoute& route) {
  std::vector<std::string> columns;
  std::string_view rest = text;
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    if (item.empty()) throw std::invalid_argument("empty column name in '" + std::string(text) + "'");
    std::string_view qualifier = item;
    if (const auto colon = item.find(':'); colon != std::string_view::npos) {
      if (item.substr(0, colon) != route.family) {
        throw std::invalid_argument("unknown column '" + std::string(item) + "': events are stored in family '" +
                                    route.family + "'");
      }
      qualifier = item.substr(colon + 1);
    }
    if (qualifier.empty() || (route.known_qualifiers && !route.known_qualifiers->contains(std::string(qualifier)))) {
      throw std::invalid_argument("unknown column '" + std::string(item) + "'");
    }
    columns.push_back(route.family + ":" + std::string(qualifier));
  }
  return columns;
}

}  // namespace hbingest::query
