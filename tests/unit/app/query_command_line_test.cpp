// One request model for GET /v1/events and `hbingest query`: the same parameters, given as a query
// string to the HTTP handler and as options to the command line, give the same Query, or the same
// refusal of the same parameter with the same reason.
#include <gtest/gtest.h>

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <variant>
#include <vector>

#include "hbingest/app/query_command_line.h"
#include "hbingest/connectors/scanner.h"
#include "hbingest/keyspec/key_spec.h"
#include "hbingest/query/query_engine.h"
#include "hbingest/server/events_handler.h"

namespace hbingest::app {
namespace {

class EmptyScanner final : public connectors::RowScanner {
 public:
  std::vector<connectors::ScannedRow> next_chunk() override { return {}; }
  bool exhausted() const override { return true; }
  void close() noexcept override {}
};

class EmptyScannerFactory final : public connectors::ScannerFactory {
 public:
  std::unique_ptr<connectors::RowScanner> open(const connectors::ScanRequest&) override {
    return std::make_unique<EmptyScanner>();
  }
};

query::RouteLookup routes() {
  static const auto events =
      std::make_shared<const keyspec::KeySpec>(keyspec::KeySpec::preset("events", {{"buckets", "8"}}));
  return [](std::string_view event_id) -> std::optional<query::EventRoute> {
    if (event_id != "login" && event_id != "order") return std::nullopt;
    return query::EventRoute{.table = "ns:events",
                             .spec = events,
                             .family = "d",
                             .known_qualifiers = std::set<std::string>{"event_id", "user", "note"}};
  };
}

// Everything a Query says, in one comparable line.
std::string describe(const query::Query& q) {
  std::ostringstream out;
  out << q.table << " spec=" << q.spec.get() << " event=" << q.event_id.value_or("-")
      << " from=" << (q.from_ms ? std::to_string(*q.from_ms) : "-")
      << " to=" << (q.to_ms ? std::to_string(*q.to_ms) : "-")
      << " splits=" << (q.full_table_splits ? std::to_string(*q.full_table_splits) : "-") << " limit=" << q.limit
      << " order=" << (q.order == query::Order::desc ? "desc" : "asc")
      << " merge=" << (q.merge == query::MergeBy::key ? "key" : "time") << " columns=";
  for (const auto& column : q.columns) out << column << ";";
  return out.str();
}

struct Outcome {
  std::string query{};      // describe() when built
  std::string parameter{};  // else the parameter refused
  std::string reason{};
  bool operator==(const Outcome&) const = default;
};

std::ostream& operator<<(std::ostream& out, const Outcome& o) {
  return out << (o.query.empty() ? "refused " + o.parameter + ": " + o.reason : o.query);
}

class QueryCommandLineTest : public ::testing::Test {
 protected:
  QueryCommandLineTest() {
    config_.default_limit = 50;
    config_.max_limit = 5000;
  }

  server::EventsHandler handler() {
    return server::EventsHandler(
        engine_, routes(),
        server::EventsHandlerOptions{.default_limit = config_.default_limit, .max_limit = config_.max_limit});
  }

  Outcome over_http(const query::Parameters& parameters) {
    server::HttpRequest request;
    request.path = "/v1/events";
    request.params = parameters;
    auto events = handler();
    try {
      const auto q = events.query_for(request);
      EXPECT_EQ(events(request).status, 200);
      return {.query = describe(q)};
    } catch (const query::RequestError& e) {
      // The handler's answer to it: 400 with the model's text and the parameter.
      const auto response = events(request);
      EXPECT_EQ(response.status, 400);
      const auto body = nlohmann::json::parse(response.body);
      EXPECT_EQ(body.at("error"), "parameter '" + e.parameter() + "': " + e.reason());
      EXPECT_EQ(body.at("parameter"), e.parameter());
      return {.parameter = e.parameter(), .reason = e.reason()};
    }
  }

  Outcome on_the_command_line(const query::Parameters& parameters) {
    Args args = {"--config", "unused.yaml", "--format", "json"};
    for (const auto& [name, value] : parameters) {
      args.push_back(option_of(name));
      args.push_back(value);
    }
    auto parsed = parse_query_command_line(args);
    const auto* line = std::get_if<QueryCommandLine>(&parsed);
    if (line == nullptr) {
      ADD_FAILURE() << "usage error";
      return {};
    }
    EXPECT_EQ(line->config_path, "unused.yaml");
    EXPECT_EQ(line->format, "json");
    try {
      return {.query = describe(query::build_query(
                  query::parse_events_request(line->parameters, command_line_rules(config_)), routes()))};
    } catch (const query::RequestError& e) {
      EXPECT_EQ(command_line_error(e), option_of(e.parameter()) + ": " + e.reason());
      return {.parameter = e.parameter(), .reason = e.reason()};
    }
  }

  config::QueryConfig config_;
  EmptyScannerFactory factory_;
  query::QueryEngine engine_{factory_, query::EngineOptions{.concurrency = 2}};
};

TEST_F(QueryCommandLineTest, TheSameParametersGiveTheSameQueryOrTheSameRefusal) {
  std::string many_columns;
  for (int i = 0; i < 10000; ++i) many_columns += (i ? ",user" : "user");
  const std::vector<query::Parameters> cases = {
      {{"event_id", "login"}},
      {{"event_id", "order"},
       {"from", "2024-05-01T12:00:00Z"},
       {"to", "1714564900000"},
       {"limit", "5000"},
       {"order", "desc"},
       {"columns", "user,d:note,user"}},
      {{"event_id", "login"}, {"from", "-5"}},
      {{"event_id", "login"}, {"to", "2024-05-01T14:00:00.250+02:00"}},
      // refused
      {},
      {{"from", "1"}, {"to", "2"}},
      {{"event_id", "signup"}},
      {{"event_id", "login"}, {"event_id", "order"}},
      {{"event_id", "login"}, {"from", "1"}, {"from", "1"}},
      {{"event_id", "login"}, {"from", "2"}, {"to", "1"}},
      {{"event_id", "login"}, {"from", "5"}, {"to", "5"}},
      {{"event_id", "login"}, {"from", "yesterday"}},
      {{"event_id", "login"}, {"to", "2024-13-01T00:00:00Z"}},
      {{"event_id", "login"}, {"limit", "0"}},
      {{"event_id", "login"}, {"limit", "-1"}},
      {{"event_id", "login"}, {"limit", "5001"}},
      {{"event_id", "login"}, {"limit", "99999999999999999999"}},
      {{"event_id", "login"}, {"order", "sideways"}},
      {{"event_id", "login"}, {"columns", "user,password"}},
      {{"event_id", "login"}, {"columns", "x:user"}},
      {{"event_id", "login"}, {"columns", "user,"}},
      {{"event_id", "login"}, {"columns", many_columns}},
  };
  std::size_t built = 0;
  for (const auto& parameters : cases) {
    const Outcome http = over_http(parameters);
    const Outcome cli = on_the_command_line(parameters);
    EXPECT_EQ(http, cli) << ::testing::PrintToString(parameters);
    built += !http.query.empty();
  }
  EXPECT_EQ(built, 4u) << "the others are refused";
}

TEST_F(QueryCommandLineTest, OnlyTheCommandLineExportsAWholeTable) {
  EXPECT_EQ(over_http({{"full_table", "order"}}).parameter, "full_table");
  const auto cli = on_the_command_line({{"full_table", "order"}});
  EXPECT_NE(cli.query.find("splits=8 limit=0 order=asc merge=key"), std::string::npos) << cli;
  EXPECT_EQ(on_the_command_line({{"full_table", "order"}, {"from", "1"}}).parameter, "from");
}

TEST_F(QueryCommandLineTest, OptionsTheModelDoesNotKnowAreUsageErrors) {
  for (const Args& args :
       {Args{"--config", "c.yaml", "--event-id", "login", "--colour", "red"},
        Args{"--config", "c.yaml", "--event-id", "login", "two"},
        Args{"--config", "c.yaml", "--event-id", "login", "--format", "xml"}, Args{"--event-id", "login"}}) {
    const auto parsed = parse_query_command_line(args);
    ASSERT_TRUE(std::holds_alternative<int>(parsed)) << ::testing::PrintToString(args);
    EXPECT_EQ(std::get<int>(parsed), 2);
  }
  EXPECT_EQ(option_of("event_id"), "--event-id");
  EXPECT_EQ(option_of("full_table"), "--full-table");
  EXPECT_EQ(command_line_error(query::RequestError("limit", "0 is not a row count (1 to 5)")),
            "--limit: 0 is not a row count (1 to 5)");
}

}  // namespace
}  // namespace hbingest::app
