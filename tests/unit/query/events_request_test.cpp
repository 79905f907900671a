// The request model of /v1/events and `hbingest query`: parameters → EventsRequest → Query, and
// every refusal naming its parameter, with hostile values.
#include "hbingest/query/events_request.h"

#include <gtest/gtest.h>

#include <limits>
#include <map>
#include <memory>
#include <set>
#include <string>

#include "hbingest/keyspec/key_spec.h"

namespace hbingest::query {
namespace {

const RequestRules kHttp{.default_limit = 100, .max_limit = 10000, .full_table_export = false};
const RequestRules kCli{.default_limit = 100, .max_limit = 10000, .full_table_export = true};

std::shared_ptr<const keyspec::KeySpec> preset(const std::string& name,
                                               const std::map<std::string, std::string, std::less<>>& params) {
  return std::make_shared<const keyspec::KeySpec>(keyspec::KeySpec::preset(name, params));
}

// login/order: the events preset, three known qualifiers; free: any qualifier; graph: a spec with no
// event component.
RouteLookup routes() {
  static const auto events = preset("events", {{"buckets", "8"}});
  static const auto follows = preset("follows", {});
  return [](std::string_view event_id) -> std::optional<EventRoute> {
    if (event_id == "login" || event_id == "order") {
      return EventRoute{.table = "ns:events",
                        .spec = events,
                        .family = "d",
                        .known_qualifiers = std::set<std::string>{"event_id", "user", "note"}};
    }
    if (event_id == "free") return EventRoute{.table = "ns:events", .spec = events};  // any qualifier of d
    if (event_id == "graph") return EventRoute{.table = "follows", .spec = follows, .family = "f"};
    return std::nullopt;
  };
}

// The parameter a request is refused for, and why; "" when it is accepted and builds a Query.
std::pair<std::string, std::string> refusal(const Parameters& parameters, const RequestRules& rules = kHttp) {
  try {
    build_query(parse_events_request(parameters, rules), routes());
    return {};
  } catch (const RequestError& e) {
    EXPECT_EQ(std::string(e.what()), "parameter '" + e.parameter() + "': " + e.reason()) << "printable names only";
    return {e.parameter(), e.reason()};
  }
}

std::string refused_for(const Parameters& parameters, const RequestRules& rules = kHttp) {
  return refusal(parameters, rules).first;
}

TEST(EventsRequestTest, DefaultsAndEveryParameter) {
  auto request = parse_events_request({{"event_id", "login"}}, kHttp);
  EXPECT_EQ(request, (EventsRequest{.event_id = "login", .limit = 100}));
  Query q = build_query(request, routes());
  EXPECT_EQ(q.table, "ns:events");
  EXPECT_EQ(q.event_id, "login");
  EXPECT_EQ(q.limit, 100u);
  EXPECT_EQ(q.merge, MergeBy::time);
  EXPECT_FALSE(q.from_ms || q.to_ms || q.full_table_splits);
  EXPECT_TRUE(q.columns.empty());

  request = parse_events_request({{"columns", "user,d:note,user,d:user"},
                                  {"order", "desc"},
                                  {"limit", "007"},
                                  {"to", "1714564900000"},
                                  {"from", "2024-05-01T12:00:00Z"},
                                  {"event_id", "order"}},
                                 kHttp);
  q = build_query(request, routes());
  EXPECT_EQ(q.from_ms, 1714564800000);
  EXPECT_EQ(q.to_ms, 1714564900000);
  EXPECT_EQ(q.limit, 7u);
  EXPECT_EQ(q.order, Order::desc);
  EXPECT_EQ(q.columns, (std::vector<std::string>{"d:user", "d:note"})) << "each column once, first order kept";
}

TEST(EventsRequestTest, OpenEndedRangesAndTheEmptyColumnList) {
  EXPECT_EQ(refused_for({{"event_id", "login"}, {"from", "5"}}), "");
  EXPECT_EQ(refused_for({{"event_id", "login"}, {"to", "-5"}}), "");
  EXPECT_TRUE(
      build_query(parse_events_request({{"event_id", "login"}, {"columns", ""}}, kHttp), routes()).columns.empty());
}

TEST(EventsRequestTest, LimitIsOneToMaxLimitWhateverTheDigits) {
  EXPECT_EQ(parse_events_request({{"event_id", "login"}, {"limit", "10000"}}, kHttp).limit, 10000u);
  EXPECT_EQ(parse_events_request({{"event_id", "login"}, {"limit", "1"}}, kHttp).limit, 1u);
  for (const char* over : {"10001", "18446744073709551615", "18446744073709551616", "99999999999999999999",
                           "000000000000000000000000000000000000000099999999999999999999"}) {
    const auto [parameter, reason] = refusal({{"event_id", "login"}, {"limit", over}});
    EXPECT_EQ(parameter, "limit") << over;
    EXPECT_NE(reason.find("over the maximum of 10000"), std::string::npos) << over << ": " << reason;
  }
  for (const char* bad : {"0", "00", "-1", "+5", " 5", "5 ", "0x10", "1e3", "5.0", "", "five", "５"}) {
    const auto [parameter, reason] = refusal({{"event_id", "login"}, {"limit", bad}});
    EXPECT_EQ(parameter, "limit") << bad;
    EXPECT_NE(reason.find("1 to 10000"), std::string::npos) << bad << ": " << reason;
  }
}

TEST(EventsRequestTest, TimesAreEpochMillisOrRfc3339AndFromComesBeforeTo) {
  EXPECT_EQ(refused_for({{"event_id", "login"}, {"from", "2024-05-01T12:10:00Z"}, {"to", "2024-05-01T12:00:00Z"}}),
            "from");
  EXPECT_EQ(refused_for({{"event_id", "login"}, {"from", "5"}, {"to", "5"}}), "from");
  EXPECT_EQ(refused_for({{"event_id", "login"}, {"from", "yesterday"}}), "from");
  EXPECT_EQ(refused_for({{"event_id", "login"}, {"to", "2024-13-01T00:00:00Z"}}), "to");
  EXPECT_EQ(refused_for({{"event_id", "login"}, {"to", "99999999999999999999"}}), "to");
  EXPECT_EQ(refused_for({{"event_id", "login"}, {"from", ""}}), "from");
  // The extremes of the time type are accepted or refused as a planning error, never a crash.
  const auto min = std::to_string(std::numeric_limits<std::int64_t>::min());
  const auto max = std::to_string(std::numeric_limits<std::int64_t>::max());
  for (const auto& [from, to] : {std::pair{min, max}, std::pair{min, min}, std::pair{std::string("0"), max}}) {
    const auto parameter = refused_for({{"event_id", "login"}, {"from", from}, {"to", to}});
    EXPECT_TRUE(parameter.empty() || parameter == "from" || parameter == "event_id") << from << " " << to;
  }
}

TEST(EventsRequestTest, ColumnsAreCheckedAgainstTheRouteAndBounded) {
  EXPECT_EQ(refused_for({{"event_id", "login"}, {"columns", "user,password"}}), "columns");
  EXPECT_EQ(refused_for({{"event_id", "login"}, {"columns", "x:user"}}), "columns");
  EXPECT_EQ(refused_for({{"event_id", "login"}, {"columns", ":user"}}), "columns");
  for (const char* empty_item : {"user,,note", ",user", "user,", ",", "d:"}) {
    EXPECT_EQ(refused_for({{"event_id", "login"}, {"columns", empty_item}}), "columns") << empty_item;
  }
  // A route that does not know its qualifiers takes any; a colon after the family is the qualifier's.
  const auto q = build_query(parse_events_request({{"event_id", "free"}, {"columns", "a,d:b:c"}}, kHttp), routes());
  EXPECT_EQ(q.columns, (std::vector<std::string>{"d:a", "d:b:c"}));
}

TEST(EventsRequestTest, TenThousandColumnsAreRefusedBeforeAnyRouteIsLookedUp) {
  std::string many;
  for (int i = 0; i < 10000; ++i) many += (i ? ",c" : "c") + std::to_string(i);
  const auto [parameter, reason] = refusal({{"event_id", "login"}, {"columns", many}});
  EXPECT_EQ(parameter, "columns");
  EXPECT_NE(reason.find("more than 1024"), std::string::npos) << reason;

  std::string same;
  for (std::size_t i = 0; i < kMaxColumns; ++i) same += i ? ",user" : "user";
  const auto q = build_query(parse_events_request({{"event_id", "login"}, {"columns", same}}, kHttp), routes());
  EXPECT_EQ(q.columns, std::vector<std::string>{"d:user"});
  EXPECT_EQ(refused_for({{"event_id", "login"}, {"columns", same + ",user"}}), "columns");
}

TEST(EventsRequestTest, RepeatsAndUnknownNamesAreRefusedFirst) {
  for (const char* name : {"event_id", "from", "to", "limit", "order", "columns"}) {
    const std::string value = std::string(name) == "event_id" ? "login" : std::string(name) == "order" ? "asc" : "";
    const auto [parameter, reason] = refusal({{"event_id", "login"}, {name, value}, {name, value}});
    EXPECT_EQ(parameter, name);
    EXPECT_EQ(reason, "given more than once");
  }
  EXPECT_EQ(refused_for({{"colums", "user"}, {"event_id", "login"}}), "colums");
  EXPECT_EQ(refused_for({{"event_id", "login"}, {"", ""}}), "");
  EXPECT_EQ(refused_for({{"event_id", "login"}, {"full_table", "login"}}), "full_table") << "not over HTTP";
  EXPECT_EQ(refused_for({{"limit", "5"}}), "event_id");
  EXPECT_EQ(refused_for({{"event_id", ""}}), "event_id");
  EXPECT_EQ(refused_for({{"event_id", "logout"}}), "event_id");
  EXPECT_EQ(refused_for({{"event_id", "login"}, {"order", "sideways"}}), "order");
  EXPECT_EQ(refused_for({{"event_id", "login"}, {"order", "DESC"}}), "order");
}

TEST(EventsRequestTest, HostileValuesAreQuotedBoundedAndPrintable) {
  const std::string huge(1 << 20, 'x');
  for (const auto& [name, value] : {std::pair<std::string, std::string>{"limit", huge},
                                    {"from", huge},
                                    {"order", huge},
                                    {"columns", "d:" + huge + ",zz"},
                                    {std::string("bad\0name\n\x1b[31m", 14), "1"},
                                    {huge, "1"}}) {
    try {
      build_query(parse_events_request({{"event_id", "login"}, {name, value}}, kHttp), routes());
      ADD_FAILURE() << name.substr(0, 20);
    } catch (const RequestError& e) {
      const std::string what = e.what();
      EXPECT_LT(what.size(), 400u) << what;
      for (const char c : what) ASSERT_TRUE(c >= 0x20 && c < 0x7f) << what;
    }
  }
}

TEST(EventsRequestTest, AnEventTypeTheSpecCannotPlanIsRefusedOnEventId) {
  const auto [parameter, reason] = refusal({{"event_id", "graph"}});
  EXPECT_EQ(parameter, "event_id");
  EXPECT_NE(reason.find("cannot plan the query"), std::string::npos) << reason;
}

TEST(EventsRequestTest, FullTableExportOnlyWhereAllowed) {
  auto request = parse_events_request({{"full_table", "order"}}, kCli);
  EXPECT_TRUE(request.full_table);
  EXPECT_EQ(request.limit, 0u) << "an export reads every row unless limited";
  const Query q = build_query(request, routes());
  EXPECT_EQ(q.full_table_splits, 8);
  EXPECT_EQ(q.merge, MergeBy::key);
  EXPECT_FALSE(q.event_id);
  EXPECT_EQ(q.limit, 0u);
  EXPECT_EQ(parse_events_request({{"full_table", "order"}, {"limit", "5"}}, kCli).limit, 5u);
  EXPECT_EQ(refused_for({{"full_table", "order"}, {"limit", "0"}}, kCli), "limit");
  EXPECT_EQ(refused_for({{"full_table", "order"}, {"limit", "10001"}}, kCli), "limit");
  EXPECT_EQ(refused_for({{"full_table", "order"}, {"from", "1"}}, kCli), "from");
  EXPECT_EQ(refused_for({{"full_table", "order"}, {"to", "1"}}, kCli), "to");
  EXPECT_EQ(refused_for({{"full_table", "order"}, {"event_id", "order"}}, kCli), "event_id");
  EXPECT_EQ(refused_for({{"full_table", ""}}, kCli), "full_table");
  EXPECT_EQ(refused_for({{"full_table", "nope"}}, kCli), "full_table");
  EXPECT_EQ(refused_for({{"full_table", "order"}}, kHttp), "full_table");
  // The query rules are the same with or without the export.
  EXPECT_EQ(parse_events_request({{"event_id", "login"}}, kCli).limit, 100u);
  EXPECT_EQ(refused_for({{"event_id", "login"}, {"limit", "0"}}, kCli), "limit");
}

}  // namespace
}  // namespace hbingest::query
