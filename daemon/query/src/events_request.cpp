#include "hbingest/query/events_request.h"

#include <algorithm>
#include <charconv>
#include <map>
#include <set>

#include "hbingest/keyspec/key_spec.h"
#include "hbingest/query/query_engine.h"
#include "hbingest/query/time_arg.h"
#include "quote_bounded.h"

namespace hbingest::query {

namespace {

using detail::quote_bounded;

constexpr std::string_view kEventId = "event_id";
constexpr std::string_view kFullTable = "full_table";
constexpr std::string_view kFrom = "from";
constexpr std::string_view kTo = "to";
constexpr std::string_view kLimit = "limit";
constexpr std::string_view kOrder = "order";
constexpr std::string_view kColumns = "columns";
constexpr std::string_view kQueryParameters[] = {kEventId, kFrom, kTo, kLimit, kOrder, kColumns};

// The value of each known parameter, after unknown names and repeats were refused.
class Values {
 public:
  Values(const Parameters& parameters, const RequestRules& rules) {
    for (const auto& [name, value] : parameters) {
      const bool known =
          std::find(std::begin(kQueryParameters), std::end(kQueryParameters), name) != std::end(kQueryParameters) ||
          (rules.full_table_export && name == kFullTable);
      if (!known) throw RequestError(name, "unknown parameter (known: " + known_list(rules) + ")");
      if (!given_.emplace(name, value).second) throw RequestError(name, "given more than once");
    }
  }

  const std::string* get(std::string_view name) const {
    const auto it = given_.find(name);
    return it == given_.end() ? nullptr : &it->second;
  }

 private:
  static std::string known_list(const RequestRules& rules) {
    std::string list;
    for (const auto name : kQueryParameters) {
      if (!list.empty()) list += ", ";
      list += name;
    }
    if (rules.full_table_export) list += ", " + std::string(kFullTable);
    return list;
  }

  std::map<std::string, std::string, std::less<>> given_;
};

std::optional<std::int64_t> time_value(const Values& values, std::string_view name) {
  const std::string* text = values.get(name);
  if (text == nullptr) return std::nullopt;
  try {
    return parse_time_arg(*text);
  } catch (const std::invalid_argument& e) {
    throw RequestError(std::string(name), e.what());
  }
}

std::size_t limit_value(const Values& values, const RequestRules& rules, bool full_table) {
  const std::string* text = values.get(kLimit);
  // An export reads the whole table unless told otherwise; a query gets the configured default.
  if (text == nullptr) return full_table ? 0 : rules.default_limit;
  const std::string range = "1 to " + std::to_string(rules.max_limit);
  std::size_t limit = 0;
  const char* end = text->data() + text->size();
  const auto [stop, ec] = std::from_chars(text->data(), end, limit);
  if (stop != end || (ec != std::errc{} && ec != std::errc::result_out_of_range)) {
    throw RequestError(std::string(kLimit), quote_bounded(*text) + " is not a row count (" + range + ")");
  }
  if (ec == std::errc::result_out_of_range || limit > rules.max_limit) {
    throw RequestError(std::string(kLimit), quote_bounded(*text) + " is over the maximum of " +
                                                std::to_string(rules.max_limit) + " (query.max_limit)");
  }
  if (limit == 0) throw RequestError(std::string(kLimit), "0 is not a row count (" + range + ")");
  return limit;
}

Order order_value(const Values& values) {
  const std::string* text = values.get(kOrder);
  if (text == nullptr || *text == "asc") return Order::asc;
  if (*text == "desc") return Order::desc;
  throw RequestError(std::string(kOrder), quote_bounded(*text) + " is neither asc nor desc");
}

std::vector<ColumnName> column_names(const Values& values) {
  const std::string* text = values.get(kColumns);
  std::vector<ColumnName> names;
  if (text == nullptr || text->empty()) return names;
  std::string_view rest = *text;
  for (std::size_t index = 1;; ++index) {
    const auto comma = rest.find(',');
    const std::string_view item = rest.substr(0, comma);
    if (index > kMaxColumns) {
      throw RequestError(std::string(kColumns), "more than " + std::to_string(kMaxColumns) + " columns");
    }
    if (item.empty()) throw RequestError(std::string(kColumns), "column " + std::to_string(index) + " is empty");
    ColumnName name;
    if (const auto colon = item.find(':'); colon != std::string_view::npos) {
      name.family = std::string(item.substr(0, colon));
      name.qualifier = std::string(item.substr(colon + 1));
    } else {
      name.qualifier = std::string(item);
    }
    if (name.qualifier.empty()) throw RequestError(std::string(kColumns), quote_bounded(item) + " names no qualifier");
    names.push_back(std::move(name));
    if (comma == std::string_view::npos) break;
    rest.remove_prefix(comma + 1);
  }
  return names;
}

// "d:user" for every name, each once, in the order first asked for.
std::vector<std::string> resolve_columns(const std::vector<ColumnName>& names, const EventRoute& route) {
  std::vector<std::string> columns;
  std::set<std::string, std::less<>> seen;
  for (const auto& name : names) {
    const std::string shown = name.family ? *name.family + ":" + name.qualifier : name.qualifier;
    // A route may write several families (its row mapping's); a bare qualifier is in the first.
    const auto* mapping = route.columns_written.get();
    const std::string family = name.family.value_or(route.family);
    const bool known_family = mapping != nullptr
                                  ? std::ranges::find(mapping->families(), family) != mapping->families().end()
                                  : family == route.family;
    if (!known_family) {
      throw RequestError(
          std::string(kColumns),
          "unknown column " + quote_bounded(shown) + ": events are stored in family '" + route.family + "'" +
              (mapping != nullptr && mapping->families().size() > 1 ? " (and the route's other families)" : ""));
    }
    std::string column = family + ":" + name.qualifier;
    const auto known = mapping != nullptr ? mapping->known_qualifiers() : std::nullopt;
    const bool unknown = mapping != nullptr
                             ? known && !known->contains(column)
                             : route.known_qualifiers && !route.known_qualifiers->contains(name.qualifier);
    if (unknown) throw RequestError(std::string(kColumns), "unknown column " + quote_bounded(shown));
    if (seen.insert(column).second) columns.push_back(std::move(column));
  }
  return columns;
}

}  // namespace

RequestError::RequestError(std::string parameter, std::string reason)
    : std::invalid_argument("parameter " + quote_bounded(parameter) + ": " + reason),
      parameter_(std::move(parameter)),
      reason_(std::move(reason)) {}

EventsRequest parse_events_request(const Parameters& parameters, const RequestRules& rules) {
  const Values values(parameters, rules);
  EventsRequest request;
  const std::string* event_id = values.get(kEventId);
  const std::string* full_table = values.get(kFullTable);
  if (full_table != nullptr) {
    // An export reads the whole table, every event type of it, in key order.
    for (const auto name : {kEventId, kFrom, kTo}) {
      if (values.get(name) != nullptr) {
        throw RequestError(std::string(name), "not with a full-table export (it reads every row of the table)");
      }
    }
    if (full_table->empty()) throw RequestError(std::string(kFullTable), "names no event type");
    request.event_id = *full_table;
    request.full_table = true;
  } else {
    if (event_id == nullptr || event_id->empty()) {
      throw RequestError(std::string(kEventId), "is required");
    }
    request.event_id = *event_id;
  }
  request.from_ms = time_value(values, kFrom);
  request.to_ms = time_value(values, kTo);
  if (request.from_ms && request.to_ms && *request.from_ms >= *request.to_ms) {
    throw RequestError(std::string(kFrom), std::to_string(*request.from_ms) + " is not before the end of the range (" +
                                               std::to_string(*request.to_ms) + "): the range [from, to) is empty");
  }
  request.limit = limit_value(values, rules, request.full_table);
  request.order = order_value(values);
  request.columns = column_names(values);
  return request;
}

Query build_query(const EventsRequest& request, const RouteLookup& routes) {
  const std::string_view parameter = request.full_table ? kFullTable : kEventId;
  const auto route = routes(request.event_id);
  if (!route)
    throw RequestError(std::string(parameter), "no route serves event type " + quote_bounded(request.event_id));
  if (!route->spec) {
    throw RequestError(std::string(parameter), "the route of " + quote_bounded(request.event_id) + " has no key spec");
  }
  Query query;
  query.table = route->table;
  query.spec = route->spec;
  query.columns_written = route->columns_written;
  query.packed = route->packed;
  if (request.full_table) {
    query.full_table_splits = route->spec->salt_buckets();
    query.merge = MergeBy::key;
  } else {
    query.event_id = request.event_id;
    query.from_ms = request.from_ms;
    query.to_ms = request.to_ms;
  }
  query.limit = request.limit;
  query.order = request.order;
  query.columns = resolve_columns(request.columns, *route);
  // Planning is pure and cheap: a spec's refusal (e.g. an event type its dict does not know) is the
  // request's fault, told before any scanner is opened.
  try {
    plan_query(query);
  } catch (const keyspec::SpecError& e) {
    throw RequestError(std::string(parameter), std::string("cannot plan the query: ") + e.what());
  } catch (const QueryError& e) {
    throw RequestError(std::string(parameter), std::string("cannot plan the query: ") + e.what());
  }
  return query;
}

}  // namespace hbingest::query
