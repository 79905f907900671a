// The pipeline over the real librdkafka consumer (KafkaSource) and librdkafka's in-process mock
// cluster, with fakes for HBase and (unless a test asks for the real producer) the dead-letter topic. Built and torn
// down in run_command's order (source, dead letters, writers, pipeline; destroyed the other way round), so a way out of
// run() that leaves the pipeline registered shows up as ASan/UBSan errors in the consumer's close.

#include <gtest/gtest.h>

#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "fakes.h"
#include "hbingest/connectors/dead_letter_producer.h"
#include "hbingest/connectors/kafka_source.h"
#include "hbingest/ingest/pipeline.h"
#include "mock_kafka_cluster.h"
#include "test_routes.h"

namespace hbingest::ingest {
namespace {

using namespace std::chrono_literals;
using testing::FakeDeadLetters;
using testing::FakeSink;
using testing::FakeTable;
using testing::MockKafkaCluster;
using testing::run_pipeline_until;

constexpr std::int64_t kNowMs = 1'790'000'000'000;  // fixed "now" for TTL decisions
constexpr auto kDeadline = 60s;                     // the mock group's first join alone takes ~3 s
constexpr std::int64_t kNoOffset = -1001;           // RD_KAFKA_OFFSET_INVALID: nothing committed
const connectors::TopicPartition kPartition{"events", 0};

std::string login_event(int n) {
  return R"({"event_id":"login","ts":)" + std::to_string(kNowMs) + R"(,"user_id":"u)" + std::to_string(n) + R"("})";
}

struct MockKafkaPipeline {
  MockKafkaPipeline() {
    cluster.create_topic(kPartition.topic, 1);
    options.on_invalid = config::OnInvalid::fail;
    options.commit_interval = 1h;  // no periodic commit: what is committed comes from the way out of run()
    options.batch.linger = 5ms;
    options.shutdown_deadline = 5s;
  }

  connectors::KafkaSourceOptions source_options() const {
    connectors::KafkaSourceOptions out;
    out.bootstrap_servers = cluster.bootstrap_servers();
    out.group_id = "hbingest-unit-pipeline";
    out.topics = {kPartition.topic};
    out.close_timeout = 10s;
    out.properties = source_properties;
    return out;
  }

  // Runs the pipeline on its own thread; `step` runs on this thread until it returns true (then
  // the pipeline is asked to stop), until run() returns or throws, or until the deadline.
  // Returns what run() threw.
  std::exception_ptr run(const std::function<bool(const Pipeline&)>& step) {
    return run_pipeline_until(
        *pipeline, [&] { return step(*pipeline); }, kDeadline);
  }

  // The group's committed next-offset of events/0, read after the pipeline left.
  std::int64_t committed() const {
    return cluster.committed_offset(source_options().group_id, kPartition.topic, kPartition.partition);
  }

  std::size_t rows() {
    std::lock_guard lock(table.mutex);
    return table.rows.size();
  }

  MockKafkaCluster cluster;  // first: outlives every client
  FakeTable table;
  PipelineObserver observer;
  PipelineObserver* custom_observer = nullptr;  // instead of `observer` when set
  routing::RouteSet router{{testing::test_route("default:events", {"login"}, keyspec::KeySpec::preset("events", {}))},
                           std::nullopt};
  PipelineOptions options;
  std::map<std::string, std::string> source_properties;  // librdkafka's, on top of the defaults
  // When set, build() sends dead letters through a real KafkaDeadLetterProducer to the mock cluster.
  std::optional<connectors::DeadLetterProducerOptions> kafka_dead_letters;
  // run_command's order.
  std::unique_ptr<connectors::KafkaSource> source;
  FakeDeadLetters dead_letters;
  std::unique_ptr<connectors::KafkaDeadLetterProducer> producer;
  std::unique_ptr<WriterPool> writers;
  std::unique_ptr<Pipeline> pipeline;

  void build() {
    source = std::make_unique<connectors::KafkaSource>(source_options());
    connectors::DeadLetterSink* sink = &dead_letters;
    if (kafka_dead_letters) {
      producer = std::make_unique<connectors::KafkaDeadLetterProducer>(*kafka_dead_letters);
      sink = producer.get();
    }
    std::vector<std::unique_ptr<connectors::RowSink>> sinks;
    sinks.push_back(std::make_unique<FakeSink>(table));
    PipelineObserver& watcher = custom_observer != nullptr ? *custom_observer : observer;
    writers =
        std::make_unique<WriterPool>(std::move(sinks), connectors::WriteOptions{}, RetryPolicy{1ms, 5ms}, watcher);
    pipeline = std::make_unique<Pipeline>(options, *source, *sink, *writers, router, watcher, [] { return kNowMs; });
  }
  // The other way round, as run_command's scope ends: the pipeline first, the source last.
  void tear_down() {
    pipeline.reset();
    writers.reset();
    producer.reset();
    source.reset();
  }
};

TEST(PipelineOnMockKafka, InvalidEventInFailModeStopsWithItsPositionAndCommitsOnlyWhatIsStored) {
  MockKafkaPipeline h;
  h.cluster.produce("events", 0, login_event(0));
  h.cluster.produce("events", 0, login_event(1));
  h.build();
  bool produced_bad = false;
  const auto failure = h.run([&](const Pipeline& pipeline) {
    // The bad event arrives once both good ones are stored and the pipeline has seen it.
    if (!produced_bad && pipeline.stats().rows_stored == 2) {
      h.cluster.produce("events", 0, "garbage");       // offset 2
      h.cluster.produce("events", 0, login_event(3));  // offset 3: never written, never committed
      produced_bad = true;
    }
    return false;
  });
  ASSERT_TRUE(produced_bad) << "the two valid events were not stored";
  ASSERT_TRUE(failure) << "run() returned instead of stopping on the invalid event";
  try {
    std::rethrow_exception(failure);
  } catch (const InvalidEventStop& e) {
    EXPECT_NE(std::string(e.what()).find("events/0@2"), std::string::npos) << e.what();
  } catch (const std::exception& e) {
    FAIL() << "unexpected exception: " << e.what();
  }
  EXPECT_THROW(h.source->poll(1, 0ms), std::logic_error) << "run() left the group on its way out";
  h.tear_down();  // the source's destructor must not reach the destroyed pipeline
  EXPECT_EQ(h.rows(), 2u);
  EXPECT_EQ(h.committed(), 2) << "offsets 0 and 1 are stored; nothing at or past the invalid offset 2";
}

TEST(PipelineOnMockKafka, StopDrainsCommitsPastTheLastEventAndLeaves) {
  MockKafkaPipeline h;
  for (int n = 0; n < 5; ++n) h.cluster.produce("events", 0, login_event(n));
  h.build();
  const auto failure = h.run([](const Pipeline& pipeline) { return pipeline.stats().consumed == 5; });
  EXPECT_FALSE(failure);
  EXPECT_THROW(h.source->poll(1, 0ms), std::logic_error);
  h.tear_down();
  EXPECT_EQ(h.rows(), 5u);
  EXPECT_EQ(h.committed(), 5);
}

TEST(PipelineOnMockKafka, DeadLetterTooLargeForKafkaDoesNotFreezeItsPartition) {
  // The producer refuses records over 10 000 bytes, as a broker does for a DLQ topic created with
  // max.message.bytes=10000 (the mock brokers enforce no topic limit): the 20 000-byte letter is
  // refused for what it is, every time it is sent as it is.
  MockKafkaPipeline h;
  h.options.on_invalid = config::OnInvalid::dlq;
  h.cluster.create_topic("dlq", 1);
  connectors::DeadLetterProducerOptions dlq;
  dlq.topic = "dlq";
  dlq.producer.bootstrap_servers = h.cluster.bootstrap_servers();
  dlq.producer.properties = {{"message.max.bytes", "10000"}};
  h.kafka_dead_letters = dlq;
  const std::string too_large(20000, 'x');  // not JSON: dead-lettered by the decoder
  h.cluster.produce("events", 0, login_event(0));
  h.cluster.produce("events", 0, too_large);  // offset 1
  h.cluster.produce("events", 0, login_event(2));
  h.cluster.produce("events", 0, login_event(3));
  h.build();
  const auto failure = h.run([](const Pipeline& pipeline) {
    return pipeline.stats().rows_stored == 3 && pipeline.stats().dead_lettered == 1;
  });
  EXPECT_FALSE(failure);
  h.tear_down();
  EXPECT_EQ(h.rows(), 3u);
  EXPECT_EQ(h.committed(), 4) << "the events after the letter are stored and committed";

  const auto letters = h.cluster.read("dlq", 0, 1);
  ASSERT_EQ(letters.size(), 1u);
  EXPECT_TRUE(letters[0].value.empty()) << "sent again with its headers only";
  EXPECT_EQ(letters[0].headers.at("__connect.errors.offset"), "1");
  EXPECT_EQ(letters[0].headers.at("__connect.errors.exception.class.name"), "hbingest.decode.invalid_json");
  EXPECT_EQ(letters[0].headers.at("__hbingest.truncated"), "true");
  EXPECT_EQ(letters[0].headers.at("__hbingest.original.size"), "20000");
  EXPECT_EQ(letters[0].headers.at("__hbingest.original.sha256"),
            "42e8bc96b8eec8c4e5d503483ba0cb843ce95243c8ca8575ffc69cd25d12c61c");  // Python's hashlib
}

// The offsets of events/0 the pipeline reported as acknowledged, in order.
struct CommitRecorder final : PipelineObserver {
  void on_commit(std::string_view, std::int32_t, std::int64_t offset) override {
    std::lock_guard lock(mutex);
    acknowledged.push_back(offset);
  }
  std::size_t count() {
    std::lock_guard lock(mutex);
    return acknowledged.size();
  }
  std::mutex mutex;
  std::vector<std::int64_t> acknowledged;
};

TEST(PipelineOnMockKafka, AnOlderCommitStoredAfterANewerOneIsSentAgain) {
  // librdkafka re-sends a commit by itself (here: the coordinator was still loading; in
  // test_kafka_link_faults.py: on the next connection after one was lost) after retry.backoff.ms,
  // while newer commits sent meanwhile go out at once: the coordinator stores the newer positions,
  // then the older one over them, and answers each. Taking the highest acknowledged position as
  // committed left the broker behind for good while the daemon reported no lag.
  MockKafkaPipeline h;
  CommitRecorder recorder;
  h.custom_observer = &recorder;
  h.source_properties = {{"retry.backoff.ms", "2000"}};
  h.options.commit_interval = 50ms;
  h.cluster.produce("events", 0, login_event(0));
  h.build();
  constexpr std::int16_t kOffsetCommitApiKey = 8;
  rd_kafka_mock_push_request_errors(h.cluster.get(), kOffsetCommitApiKey, 1,
                                    RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS);
  bool produced_second = false;
  std::optional<std::chrono::steady_clock::time_point> all_answered;
  std::int64_t broker = kNoOffset;
  const auto failure = h.run([&](const Pipeline& pipeline) {
    if (!produced_second) {
      // The first commit is out, refused once and waiting to be re-sent: the next event makes a
      // newer position.
      if (pipeline.stats().commits == 0) return false;
      h.cluster.produce("events", 0, login_event(1));
      produced_second = true;
      return false;
    }
    // Every commit sent is answered (one partition: one acknowledgement each), the re-sent one too.
    if (pipeline.stats().rows_stored < 2 || recorder.count() < pipeline.stats().commits) return false;
    if (!all_answered) all_answered = std::chrono::steady_clock::now();
    // Read while the pipeline runs: the final commit on the way out would hide a position that
    // was never sent again.
    broker = h.committed();
    return broker == 2 || std::chrono::steady_clock::now() - *all_answered > 10s;
  });
  EXPECT_FALSE(failure);
  EXPECT_EQ(broker, 2) << "the broker's position while the pipeline runs, once every commit is answered";
  {
    std::lock_guard lock(recorder.mutex);
    EXPECT_EQ(recorder.acknowledged.back(), 2);
  }
  h.tear_down();
  EXPECT_EQ(h.committed(), 2);
}

TEST(PipelineOnMockKafka, SourceClosingAfterAPipelineThatNeverRanDoesNotCallIt) {
  // run_command can fail between building the pipeline and running it (the HTTP server's port):
  // the source, destroyed last, still owns partitions and revokes them as it closes.
  MockKafkaPipeline h;
  h.build();
  const auto deadline = std::chrono::steady_clock::now() + kDeadline;
  while (h.pipeline->stats().assigned_partitions == 0 && std::chrono::steady_clock::now() < deadline) {
    (void)h.source->poll(10, 100ms);
  }
  ASSERT_EQ(h.source->assignment().size(), 1u);
  h.tear_down();
  EXPECT_EQ(h.committed(), kNoOffset);
}

}  // namespace
}  // namespace hbingest::ingest
