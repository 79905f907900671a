// The pipeline while the schema registry cannot answer (issue 23): a message whose schema id is not
// cached holds its partition — nothing of it from there is stored out of order, dead-lettered or
// committed — while other partitions and cached ids go on; the partition resumes by itself when the
// registry answers. An id the registry answers 404 for is dead-lettered with the id in its letter.
#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>

#include "fake_schema_registry.h"
#include "fakes.h"
#include "hbingest/ingest/pipeline.h"
#include "hbingest/ingest/writer_pool.h"
#include "test_routes.h"

namespace hbingest::ingest {
namespace {

using namespace std::chrono_literals;
using testing::confluent_framed;
using testing::FakeDeadLetters;
using testing::FakeSchemaRegistry;
using testing::FakeSink;
using testing::FakeSource;
using testing::FakeTable;

constexpr std::int64_t kNowMs = 1'790'000'000'000;

std::string framed_login(std::int32_t schema_id, int n) {
  return confluent_framed(schema_id, R"({"event_id":"login","ts":)" + std::to_string(kNowMs - 1000 + n) +
                                         R"(,"user_id":"u)" + std::to_string(n) + R"("})");
}

struct WaitObserver final : PipelineObserver {
  void on_partitions_waiting_for_schema(std::size_t count) override { waiting = count; }
  std::atomic<std::size_t> waiting{0};
};

struct SchemaHarness {
  SchemaHarness() {
    registry->add({1, connectors::SchemaType::json, R"({"type":"object"})", {}});
    registry->add({2, connectors::SchemaType::json, R"({"type":"object"})", {}});
    options.decode.format = config::EventFormat::json_schema;
    options.schema_registry = registry;
    options.commit_interval = 10ms;
    options.batch.max_rows = 3;
    options.batch.linger = 5ms;
    options.shutdown_deadline = 5s;
    options.dead_letter_retry = {1ms, 5ms};
  }

  std::size_t rows() {
    std::lock_guard lock(table.mutex);
    return table.rows.size();
  }

  std::shared_ptr<FakeSchemaRegistry> registry = std::make_shared<FakeSchemaRegistry>();
  PipelineOptions options;
  routing::RouteSet router{{testing::test_route("default:events", {"login"}, keyspec::KeySpec::preset("events", {}))},
                           std::nullopt};
  FakeSource source;
  FakeTable table;
  FakeDeadLetters dead_letters;
  WaitObserver observer;
};

TEST(PipelineSchemaWait, APartitionWaitsForItsSchemaAndResumesWhenTheRegistryAnswers) {
  SchemaHarness h;
  h.registry->set_unavailable_id(2, true);  // schema 1 is answered, schema 2 is not
  // Partition 0 needs schema 2 (not cached yet) at offset 1; partition 1 uses only schema 1.
  h.source.push("events", 0, 0, framed_login(1, 0));
  h.source.push("events", 0, 1, framed_login(2, 1));
  h.source.push("events", 0, 2, framed_login(1, 2));
  h.source.push("events", 0, 3, framed_login(99, 3));  // the registry does not know 99
  h.source.push("events", 0, 4, framed_login(1, 4));
  for (int o = 0; o < 5; ++o) h.source.push("events", 1, o, framed_login(1, 10 + o));

  std::vector<std::unique_ptr<connectors::RowSink>> sinks;
  sinks.push_back(std::make_unique<FakeSink>(h.table));
  WriterPool writers(std::move(sinks), {}, RetryPolicy{1ms, 5ms}, h.observer);
  auto pipeline = std::make_unique<Pipeline>(h.options, h.source, h.dead_letters, writers, h.router, h.observer,
                                             [] { return kNowMs; });

  std::atomic<bool> stop{false};
  std::exception_ptr failure;
  std::thread thread([&] {
    try {
      pipeline->run(stop);
    } catch (...) {
      failure = std::current_exception();
    }
  });
  const auto wait_for = [&](const std::function<bool()>& condition) {
    const auto give_up = std::chrono::steady_clock::now() + 20s;
    while (!condition() && std::chrono::steady_clock::now() < give_up) std::this_thread::sleep_for(2ms);
    return condition();
  };

  ASSERT_TRUE(wait_for([&] {
    return h.rows() == 6 && h.source.committed({"events", 0}) == 1;
  })) << "rows "
      << h.rows() << ", committed p0 " << h.source.committed({"events", 0});
  std::this_thread::sleep_for(300ms);  // a few retries while the registry stays down
  EXPECT_EQ(h.rows(), 6u) << "offset 0 of partition 0 and all 5 of partition 1 (cached schema 1)";
  EXPECT_EQ(h.source.committed({"events", 0}), 1) << "nothing at or past the waiting message is committed";
  EXPECT_EQ(h.source.committed({"events", 1}), 5);
  EXPECT_EQ(h.dead_letters.delivered_count(), 0u) << "a registry down dead-letters nothing";
  EXPECT_TRUE(h.source.is_paused({"events", 0}));
  EXPECT_FALSE(h.source.is_paused({"events", 1}));
  EXPECT_EQ(pipeline->stats().partitions_waiting_for_schema.load(), 1u);
  EXPECT_NE(pipeline->stats().schema_wait_reason.get().find("schema id 2"), std::string::npos)
      << pipeline->stats().schema_wait_reason.get();

  h.registry->set_unavailable_id(2, false);
  ASSERT_TRUE(wait_for([&] {
    return h.rows() == 9 && h.dead_letters.delivered_count() == 1 && h.source.committed({"events", 0}) == 5;
  })) << "rows "
      << h.rows() << ", letters " << h.dead_letters.delivered_count() << ", committed p0 "
      << h.source.committed({"events", 0});
  EXPECT_FALSE(h.source.is_paused({"events", 0})) << "resumed by itself";
  EXPECT_EQ(h.observer.waiting.load(), 0u);
  stop = true;
  thread.join();
  pipeline.reset();
  if (failure) std::rethrow_exception(failure);
  ASSERT_EQ(h.dead_letters.delivered.size(), 1u);
  const auto& letter = h.dead_letters.delivered[0];
  EXPECT_EQ(letter.original.offset, 3);
  EXPECT_EQ(letter.exception_class, "hbingest.decode.unknown_schema");
  EXPECT_EQ(letter.schema_id, 99);
}

// A registry that does not answer (black-holed: each request lasts its whole timeout) holds the
// partition that needs it; the pipeline thread goes on with the others meanwhile.
TEST(PipelineSchemaWait, ARegistryThatDoesNotAnswerHoldsOnlyThePartitionThatNeedsIt) {
  SchemaHarness h;
  // Schema 1 is cached before the registry stalls.
  h.source.push("events", 0, 0, framed_login(1, 0));
  h.source.push("events", 1, 0, framed_login(1, 10));
  std::vector<std::unique_ptr<connectors::RowSink>> sinks;
  sinks.push_back(std::make_unique<FakeSink>(h.table));
  WriterPool writers(std::move(sinks), {}, RetryPolicy{1ms, 5ms}, h.observer);
  Pipeline pipeline(h.options, h.source, h.dead_letters, writers, h.router, h.observer, [] { return kNowMs; });
  bool stalled = false;
  bool released = false;
  const auto failure = testing::run_pipeline_until(
      pipeline,
      [&] {
        if (!stalled && h.rows() == 2) {
          h.registry->block_id(2);
          h.source.push("events", 0, 1, framed_login(2, 1));
          for (int o = 1; o < 20; ++o) h.source.push("events", 1, o, framed_login(1, 10 + o));
          stalled = true;
        }
        if (stalled && !released && h.rows() == 21 && h.source.committed({"events", 1}) == 20) {
          EXPECT_EQ(h.source.committed({"events", 0}), 1);
          h.registry->release_id(2);  // the answer comes at last
          released = true;
        }
        return released && h.rows() == 22 && h.source.committed({"events", 0}) == 2;
      },
      20s);
  if (!released) h.registry->release_id(2);
  if (failure) std::rethrow_exception(failure);
  EXPECT_TRUE(released) << "partition 1 waited for the registry's answer about partition 0's schema";
  EXPECT_EQ(h.rows(), 22u);
  EXPECT_EQ(h.dead_letters.delivered_count(), 0u);
}

TEST(PipelineSchemaWait, AWaitingPartitionRevokedCommitsNothingOfWhatWaitsAndLiftsItsPause) {
  SchemaHarness h;
  h.registry->set_unavailable(true);
  h.source.push("events", 0, 0, framed_login(1, 0));
  h.source.push("events", 0, 1, framed_login(1, 1));
  std::vector<std::unique_ptr<connectors::RowSink>> sinks;
  sinks.push_back(std::make_unique<FakeSink>(h.table));
  WriterPool writers(std::move(sinks), {}, RetryPolicy{1ms, 5ms}, h.observer);
  Pipeline pipeline(h.options, h.source, h.dead_letters, writers, h.router, h.observer, [] { return kNowMs; });
  bool revoked = false;
  const auto failure = testing::run_pipeline_until(
      pipeline,
      [&] {
        if (!revoked && h.observer.waiting.load() == 1) {
          h.source.revoke_at_next_poll({{"events", 0}});
          revoked = true;
        }
        return revoked && h.observer.waiting.load() == 0 && !h.source.is_paused({"events", 0});
      },
      20s);
  if (failure) std::rethrow_exception(failure);
  EXPECT_EQ(h.observer.waiting.load(), 0u);
  EXPECT_FALSE(h.source.is_paused({"events", 0})) << "a pause kept through a revoke would outlive a new assignment";
  EXPECT_EQ(h.source.committed({"events", 0}), -1) << "nothing was stored, nothing may be committed";
  EXPECT_EQ(h.rows(), 0u);
  EXPECT_EQ(h.dead_letters.delivered_count(), 0u);
}

}  // namespace
}  // namespace hbingest::ingest
