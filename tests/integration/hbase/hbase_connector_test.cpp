// Our Thrift2 IDL and connector against a real HBase Thrift2 server (HBINGEST_THRIFT2).

#include <gtest/gtest.h>
#include <algorithm>
#include <cstdlib>
#include <random>
#include <thread>

#include "hbingest/connectors/hbase_admin.h"
#include "hbingest/connectors/thrift2_scanner_factory.h"
#include "hbingest/connectors/thrift2_sink.h"
#include "hbingest/support/host_port.h"
#include "tcp_forwarder.h"

namespace hbingest::connectors {
namespace {

using namespace std::chrono_literals;
using namespace std::string_literals;

Thrift2Options options_from_env() {
  const char* endpoint = std::getenv("HBINGEST_THRIFT2");
  if (endpoint == nullptr) throw std::runtime_error("HBINGEST_THRIFT2 is not set: run through scripts/test.sh");
  Thrift2Options options;
  options.endpoints = {endpoint};
  options.read_timeout = 30s;
  return options;
}

std::string unique_table(const std::string& prefix) {
  std::random_device random;
  return prefix + "_" + std::to_string(random() % 1000000000);
}

std::int64_t now_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::system_clock::now().time_since_epoch())
      .count();
}

RowMutation row(std::string key, std::string value, std::optional<std::int64_t> ttl = std::nullopt) {
  return RowMutation{std::move(key), {{"d", "v", std::move(value)}}, now_ms(), ttl};
}

std::vector<std::string> scan_keys(ScannerFactory& factory, ScanRequest request) {
  std::vector<std::string> keys;
  auto scanner = factory.open(request);
  for (auto chunk = scanner->next_chunk(); !chunk.empty(); chunk = scanner->next_chunk()) {
    for (auto& r : chunk) keys.push_back(r.row);
  }
  return keys;
}

class HBaseConnectorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    table_ = unique_table("it_conn");
    TableSpec spec;
    spec.table = table_;
    spec.families[0].ttl = 600s;
    spec.split_keys = {"10", "20", "30"};
    ASSERT_EQ(admin_.ensure_table(spec).outcome, EnsureOutcome::created);
  }
  void TearDown() override { admin_.delete_table("default", table_); }

  Thrift2Options options_ = options_from_env();
  HBaseAdmin admin_{options_};
  std::string table_;
};

TEST_F(HBaseConnectorTest, CreatedTableHasTheFamilyTtlAndVersions) {
  const auto families = admin_.describe_families("default", table_);
  ASSERT_EQ(families.size(), 1u);
  EXPECT_EQ(families[0].name, "d");
  EXPECT_EQ(families[0].ttl_seconds, 600);
  EXPECT_EQ(families[0].max_versions, 1);
  EXPECT_EQ(families[0].bloom_filter, "ROW");

  TableSpec same;
  same.table = table_;
  same.families[0].ttl = 600s;
  EXPECT_EQ(admin_.ensure_table(same).outcome, EnsureOutcome::already_matches);
  same.families[0].ttl = 60s;
  const auto differs = admin_.ensure_table(same);
  EXPECT_EQ(differs.outcome, EnsureOutcome::differs);
  ASSERT_EQ(differs.differences.size(), 1u);
  EXPECT_NE(differs.differences[0].find("TTL is 600 s, config wants 60 s"), std::string::npos);
}

TEST_F(HBaseConnectorTest, PutMultipleThenScanForwardAndReversedWithinHalfOpenRanges) {
  auto sink = make_thrift2_sink(options_);
  std::vector<RowMutation> rows;
  // Keys with a trailing 0x00 / 0x01 probe the reversed scan's bound handling.
  for (const std::string& key : {"05a"s, "10"s, "10a"s, "15"s, "20"s, "25\x00"s, "25\x01"s, "30"s, "35"s}) {
    rows.push_back(row(key, "v"));
  }
  ASSERT_TRUE(sink->write(table_, rows, {}).empty());

  auto factory = make_thrift2_scanner_factory(options_, 2);
  ScanRequest request{table_, "10", "30", {}, 2, false};
  const auto forward = scan_keys(*factory, request);
  ASSERT_EQ(forward.size(), 6u);
  EXPECT_EQ(forward.front(), "10");
  EXPECT_EQ(forward.back(), "25\x01"s);
  request.reversed = true;
  const auto backward = scan_keys(*factory, request);
  EXPECT_EQ(backward, std::vector<std::string>(forward.rbegin(), forward.rend()));
}

// One round trip for a range that fits in one chunk; a range that does not continues just after
// the last row, forward and reversed, across region boundaries and keys ending in 0x00, with the
// chunk doubling up to max_chunk_rows.
TEST_F(HBaseConnectorTest, ARangeThatFitsInOneChunkCostsOneCall) {
  auto sink = make_thrift2_sink(options_);
  std::vector<RowMutation> rows;
  std::vector<std::string> expected;
  for (int i = 0; i < 40; ++i) {
    std::string key = std::to_string(10 + i / 2) + (i % 2 ? "\x00"s : "a");
    expected.push_back(key);
    rows.push_back(row(std::move(key), "v"));
  }
  std::sort(expected.begin(), expected.end());
  ASSERT_TRUE(sink->write(table_, rows, {}).empty());
  auto factory = make_thrift2_scanner_factory(options_, 2);

  for (const bool reversed : {false, true}) {
    SCOPED_TRACE(reversed ? "reversed" : "forward");
    const auto want = reversed ? std::vector<std::string>(expected.rbegin(), expected.rend()) : expected;
    auto calls = factory->calls();
    auto scanner = factory->open({table_, "", "", {}, 41, reversed});
    auto chunk = scanner->next_chunk();
    EXPECT_EQ(factory->calls() - calls, 1u);
    EXPECT_TRUE(scanner->exhausted());
    ASSERT_EQ(chunk.size(), 40u);
    for (std::size_t i = 0; i < chunk.size(); ++i) EXPECT_EQ(chunk[i].row, want[i]);
    EXPECT_TRUE(scanner->next_chunk().empty());
    EXPECT_EQ(factory->calls() - calls, 1u);

    // 3, 6, 12, 24 rows: the fourth call comes back short.
    calls = factory->calls();
    ScanRequest growing{table_, "", "", {}, 3, reversed};
    growing.max_chunk_rows = 100;
    scanner = factory->open(growing);
    std::vector<std::string> keys;
    std::vector<std::size_t> sizes;
    while (!scanner->exhausted()) {
      auto part = scanner->next_chunk();
      sizes.push_back(part.size());
      for (auto& r : part) keys.push_back(r.row);
    }
    EXPECT_EQ(keys, want);
    EXPECT_EQ(sizes, (std::vector<std::size_t>{3, 6, 12, 19}));
    EXPECT_EQ(factory->calls() - calls, 4u);
  }
}

// A reversed scan resumes at the last row it returned and drops that row from the next answer.
// If the row expired (its TTL) or was deleted in between, the answer starts one row lower: that row
// is new and must be kept.
TEST_F(HBaseConnectorTest, AReversedScanKeepsEveryRowWhenItsLastRowExpiresBetweenCalls) {
  auto sink = make_thrift2_sink(options_);
  // Newest first, the first chunk of 3 is 16, 15, 14; 14 expires before the second call.
  std::vector<RowMutation> rows{row("10", "v"),       row("11", "v"), row("12", "v"), row("13", "v"),
                                row("14", "v", 1500), row("15", "v"), row("16", "v")};
  ASSERT_TRUE(sink->write(table_, rows, {}).empty());
  auto factory = make_thrift2_scanner_factory(options_, 1);
  auto scanner = factory->open({table_, "", "", {}, 3, true});
  std::vector<std::string> keys;
  for (auto& r : scanner->next_chunk()) keys.push_back(r.row);
  ASSERT_EQ(keys, (std::vector<std::string>{"16", "15", "14"}));
  std::this_thread::sleep_for(2500ms);  // functional: the TTL must pass, not a speed assertion
  while (!scanner->exhausted()) {
    for (auto& r : scanner->next_chunk()) keys.push_back(r.row);
  }
  EXPECT_EQ(keys, (std::vector<std::string>{"16", "15", "14", "13", "12", "11", "10"}));
}

TEST_F(HBaseConnectorTest, PerMutationTtlExpiresTheRowBeforeTheFamilyTtl) {
  auto sink = make_thrift2_sink(options_);
  std::vector<RowMutation> rows{row("short", "gone soon", 1500), row("long", "stays")};
  ASSERT_TRUE(sink->write(table_, rows, {}).empty());
  auto factory = make_thrift2_scanner_factory(options_, 1);
  EXPECT_EQ(scan_keys(*factory, {table_, "", "", {}, 10, false}).size(), 2u);
  std::this_thread::sleep_for(2500ms);  // functional: the TTL must pass, not a speed assertion
  EXPECT_EQ(scan_keys(*factory, {table_, "", "", {}, 10, false}), std::vector<std::string>{"long"});
}

TEST_F(HBaseConnectorTest, OneBadRowIsRejectedAloneAndTheRestIsStored) {
  auto sink = make_thrift2_sink(options_);
  std::vector<RowMutation> rows;
  for (int i = 0; i < 7; ++i) rows.push_back(row("ok" + std::to_string(i), "v"));
  rows.insert(rows.begin() + 3, row(std::string(40000, 'k'), "v"));  // over HBase's 32767-byte row limit
  const auto rejected = sink->write(table_, rows, {});
  ASSERT_EQ(rejected.size(), 1u);
  EXPECT_EQ(rejected[0].index, 3u);
  EXPECT_NE(rejected[0].reason.find("putMultiple"), std::string::npos) << rejected[0].reason;
  auto factory = make_thrift2_scanner_factory(options_, 1);
  EXPECT_EQ(scan_keys(*factory, {table_, "", "", {}, 100, false}).size(), 7u);
}

TEST_F(HBaseConnectorTest, ColumnsSelectQualifiers) {
  auto sink = make_thrift2_sink(options_);
  std::vector<RowMutation> rows{RowMutation{"r", {{"d", "a", "1"}, {"d", "b", "2"}}, now_ms(), std::nullopt}};
  ASSERT_TRUE(sink->write(table_, rows, {}).empty());
  auto factory = make_thrift2_scanner_factory(options_, 1);
  auto scanner = factory->open({table_, "", "", {"d:b"}, 10, false});
  const auto chunk = scanner->next_chunk();
  ASSERT_EQ(chunk.size(), 1u);
  ASSERT_EQ(chunk[0].cells.size(), 1u);
  EXPECT_EQ(chunk[0].cells[0].qualifier, "b");
  EXPECT_EQ(chunk[0].cells[0].value, "2");
}

TEST(HBaseConnectorFailure, UnreachableEndpointIsARetriableErrorNamingIt) {
  Thrift2Options options;
  options.endpoints = {"127.0.0.1:1"};
  options.connect_timeout = 500ms;
  auto sink = make_thrift2_sink(options);
  std::vector<RowMutation> rows{row("k", "v")};
  try {
    sink->write("t", rows, {});
    FAIL() << "expected HBaseError";
  } catch (const HBaseError& e) {
    EXPECT_TRUE(e.retriable());
    EXPECT_EQ(e.endpoint(), "127.0.0.1:1");
    EXPECT_NE(std::string(e.what()).find("127.0.0.1:1"), std::string::npos);
  }
}

TEST(HBaseConnectorFailure, MissingTableIsReportedByTheAdmin) {
  HBaseAdmin admin(options_from_env());
  EXPECT_FALSE(admin.table_exists("default", "no_such_table_hbingest"));
  EXPECT_EQ(admin.table_status(TableName{"default", "no_such_table_hbingest"}, {"d"}).status, TableStatus::missing);
}

TEST(HBaseConnectorFailure, PutIntoAMissingTableIsARetriableError) {
  // HBase 2.6.1's gateway: TIOError "Failed 1 action: <table>: 1 time, servers with issues: null",
  // canRetry=true. Never a success: the writers keep the batch, nothing after it is committed.
  auto sink = make_thrift2_sink(options_from_env());
  std::vector<RowMutation> rows{row("k", "v")};
  try {
    sink->write("default:no_such_table_hbingest", rows, {});
    FAIL() << "a put into a missing table answered success";
  } catch (const HBaseError& e) {
    EXPECT_TRUE(e.retriable()) << e.what();
  }
}

TEST_F(HBaseConnectorTest, TableStatusTellsAWritableTableFromOneWithoutTheFamily) {
  EXPECT_EQ(admin_.table_status(TableName{"default", table_}, {"d"}), TableState{});
  EXPECT_EQ(admin_.table_status(TableName{"default", table_}, {"x"}), (TableState{TableStatus::family_missing, {"x"}}));
  EXPECT_TRUE(admin_.is_table_enabled("default", table_));
}

TEST_F(HBaseConnectorTest, PutIntoAMissingFamilyIsARetriableError) {
  auto sink = make_thrift2_sink(options_);
  std::vector<RowMutation> rows{RowMutation{"k", {{"x", "v", "1"}}, now_ms(), std::nullopt}};
  try {
    sink->write(table_, rows, {});
    FAIL() << "a put into a missing family answered success";
  } catch (const HBaseError& e) {
    EXPECT_TRUE(e.retriable()) << e.what();
  }
}

TEST(HBaseConnectorEndpoints, ReachesAGatewayByABracketedIPv6Address) {
  // The config accepts "[::1]:9090"; the connection must hand getaddrinfo "::1", not "[::1]".
  // The stack's gateway binds 127.0.0.1, so a forwarder on ::1 stands in for an IPv6 listener.
  const auto gateway = support::parse_host_port(options_from_env().endpoints.at(0));
  hbingest::testing::TcpForwarder forwarder("::1", gateway.host, gateway.port);
  Thrift2Options options = options_from_env();
  options.endpoints = {"[::1]:" + std::to_string(forwarder.port())};
  HBaseAdmin admin(options);
  EXPECT_FALSE(admin.table_exists("default", "no_such_table_hbingest"));
  EXPECT_GE(forwarder.connections(), 1);
}

}  // namespace
}  // namespace hbingest::connectors
