// The query reader over the real Thrift2 scanner and connection pool, against a gateway on a
// loopback socket that restarts or never answers.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>
#include <vector>

#include "fake_gateway.h"
#include "hbingest/connectors/thrift2_scanner_factory.h"
#include "hbingest/query/query_engine.h"

namespace hbingest::query {
namespace {

using namespace std::chrono_literals;
using testing::FakeGateway;

connectors::Thrift2Options options_for(const FakeGateway& gateway, std::chrono::milliseconds read_timeout) {
  connectors::Thrift2Options options;
  options.endpoints = {gateway.endpoint()};
  options.read_timeout = read_timeout;
  return options;
}

connectors::ScanRequest scan_of(std::string start) {
  return connectors::ScanRequest{.table = "events",
                                 .start_row = start,
                                 .stop_row = start + "~",
                                 .columns = {},
                                 .chunk_rows = 10,
                                 .reversed = false,
                                 .max_chunk_rows = 10};
}

// After a gateway restart every pooled socket is dead. The first call on one is made again on a new
// connection, and the dead siblings are dropped with it, so no query fails and no later call
// spends a round trip on a dead socket (72ad3ec: the next calls failed, one per pooled connection).
TEST(Thrift2Scans, ConnectionsClosedByAGatewayRestartAreReplacedWithoutAFailedCall) {
  FakeGateway gateway(FakeGateway::Mode::answer);
  auto factory = connectors::make_thrift2_scanner_factory(options_for(gateway, 5000ms), 4);

  // Three calls at once: the pool ends up with three idle connections.
  gateway.answer_when_pending(3);
  std::vector<std::thread> callers;
  for (int i = 0; i < 3; ++i) {
    callers.emplace_back(
        [&, i] { EXPECT_TRUE(factory->open(scan_of("b" + std::to_string(i)))->next_chunk().empty()); });
  }
  for (auto& caller : callers) caller.join();
  ASSERT_EQ(gateway.accepted(), 3);
  ASSERT_EQ(factory->calls(), 3u);
  gateway.answer_when_pending(1);

  gateway.close_connections();  // the restart
  for (int i = 0; i < 3; ++i) {
    EXPECT_NO_THROW(EXPECT_TRUE(factory->open(scan_of("c" + std::to_string(i)))->next_chunk().empty()))
        << "query " << i << " after the restart";
  }
  // One call on a dead socket, then every call on the one new connection.
  EXPECT_EQ(factory->calls(), 3u + 2u + 1u + 1u);
  EXPECT_EQ(gateway.accepted(), 4);
}

// A gateway that accepts and never answers: the query ends at its deadline, and so does the
// thread that runs it (72ad3ec: joined its workers for the whole hbase.read_timeout, holding the
// server's slot). The bound asserted is the read timeout, not a speed.
TEST(Thrift2Scans, AQueryWhoseGatewayNeverAnswersEndsAtItsDeadline) {
  FakeGateway gateway(FakeGateway::Mode::silent);
  constexpr auto kReadTimeout = 30s;
  auto factory = connectors::make_thrift2_scanner_factory(options_for(gateway, kReadTimeout), 4);
  EngineOptions options;
  options.concurrency = 4;
  options.deadline = 300ms;
  QueryEngine engine(*factory, options);
  Query q;
  q.table = "events";
  q.spec = std::make_shared<const keyspec::KeySpec>(keyspec::KeySpec::preset("events", {{"buckets", "4"}}));
  q.event_id = "login";

  const auto started = std::chrono::steady_clock::now();
  EXPECT_THROW(engine.run(q), QueryTimeout);
  EXPECT_LT(std::chrono::steady_clock::now() - started, kReadTimeout / 2);
  EXPECT_EQ(engine.open_scanners(), 0);
  EXPECT_GE(gateway.requests(), 1);
}

// The rule every scanner sizes its next call by: doubling up to max_chunk_rows, then as many rows
// as fit in max_chunk_bytes by the largest row seen, one at least.
TEST(Thrift2Scans, ChunksShrinkToTheByteBoundByTheLargestRowSeen) {
  connectors::ScanRequest request = scan_of("a");
  request.chunk_rows = 16;
  request.max_chunk_rows = 500;
  EXPECT_EQ(connectors::next_chunk_rows(request, 16, 1000), 32) << "no byte bound: rows double";
  request.max_chunk_bytes = 100 * 1000;
  EXPECT_EQ(connectors::next_chunk_rows(request, 16, 1000), 32);
  EXPECT_EQ(connectors::next_chunk_rows(request, 64, 1000), 100) << "128 rows of 1000 bytes do not fit";
  EXPECT_EQ(connectors::next_chunk_rows(request, 16, 600 * 1000), 1) << "a row wider than the bound: one";
  EXPECT_EQ(connectors::next_chunk_rows(request, 500, 0), 500) << "nothing seen yet";
}

}  // namespace
}  // namespace hbingest::query
