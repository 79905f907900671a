#pragma once
// The `columns` argument of a query (HTTP parameter and CLI option alike): "a,d:b" → {"d:a","d:b"}.

#include <string>
#include <string_view>
#include <vector>

#include "hbingest/query/query.h"

namespace hbingest::query {

// Each item is a qualifier or "family:qualifier" in the route's family; a qualifier the route
// does not know (when it knows them all) is refused. Throws std::invalid_argument naming the item.
std::vector<std::string> parse_columns(std::string_view text, const EventRoute& route);

}  // namespace hbingest::query
