#include "hbingest/connectors/kafka_source.h"

#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <memory>
#include <stdexcept>
#include <thread>

#include "hbingest/connectors/kafka_error.h"
#include "mock_kafka_cluster.h"

namespace hbingest::connectors {
namespace {

using namespace std::chrono_literals;

// Nothing listens on port 1: every connection attempt is refused.
KafkaSourceOptions unreachable_source() {
  KafkaSourceOptions options;
  options.bootstrap_servers = "127.0.0.1:1";
  options.group_id = "hbingest-unit";
  options.topics = {"events"};
  options.close_timeout = 2s;
  // librdkafka's destroy waits up to session.timeout.ms for a commit stuck without coordinator.
  options.properties = {{"session.timeout.ms", "1000"}, {"heartbeat.interval.ms", "300"}};
  return options;
}

// Constructs a source and returns the invalid_argument message (empty when none was thrown).
std::string construction_error(KafkaSourceOptions options) {
  try {
    KafkaSource source(std::move(options));
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return {};
}

TEST(KafkaSourceConfig, UnknownPropertyIsRejectedNamingTheKey) {
  auto options = unreachable_source();
  options.properties["no.such.property"] = "1";
  const auto error = construction_error(options);
  EXPECT_NE(error.find("no.such.property"), std::string::npos) << error;
}

TEST(KafkaSourceConfig, BadValueIsRejectedNamingTheKey) {
  auto options = unreachable_source();
  options.properties["session.timeout.ms"] = "soon";
  const auto error = construction_error(options);
  EXPECT_NE(error.find("session.timeout.ms"), std::string::npos) << error;
}

TEST(KafkaSourceConfig, AutoCommitCannotBeEnabled) {
  for (const char* key : {"enable.auto.commit", "enable.auto.offset.store"}) {
    auto options = unreachable_source();
    options.properties[key] = "true";
    const auto error = construction_error(options);
    EXPECT_NE(error.find(key), std::string::npos) << error;
    options.properties[key] = "false";
    EXPECT_EQ(construction_error(options), "");
  }
}

TEST(KafkaSourceConfig, RequiredOptionsAreNamed) {
  auto options = unreachable_source();
  options.topics.clear();
  EXPECT_NE(construction_error(options).find("topics"), std::string::npos);
  options = unreachable_source();
  options.group_id.clear();
  EXPECT_NE(construction_error(options).find("group_id"), std::string::npos);
  options.properties["group.id"] = "from-properties";
  EXPECT_EQ(construction_error(options), "");
  options = unreachable_source();
  options.bootstrap_servers.clear();
  EXPECT_NE(construction_error(options).find("bootstrap_servers"), std::string::npos);
}

TEST(KafkaSourceConfig, PassThroughPropertiesAndRegexAreAccepted) {
  auto options = unreachable_source();
  options.topics = {"^events-.*"};
  options.properties["auto.offset.reset"] = "latest";
  options.properties["partition.assignment.strategy"] = "cooperative-sticky";
  options.properties["client.id"] = "hbingest-test";
  EXPECT_EQ(construction_error(options), "");
}

TEST(KafkaSource, UnreachableBrokerPollReturnsEmptyAndCloses) {
  KafkaSource source(unreachable_source());
  // No assertion on elapsed time: a hang is caught by the test timeout.
  EXPECT_TRUE(source.poll(100, 300ms).empty());
  EXPECT_TRUE(source.poll(100, 0ms).empty());
  EXPECT_TRUE(source.assignment().empty());
  source.commit_sync({}, 1s);  // nothing to commit is not an error (and never "commit everything")
  source.close(2s);
  EXPECT_THROW(source.poll(1, 0ms), std::logic_error);
  source.close(2s);  // idempotent
}

TEST(KafkaSource, SynchronousCommitWithoutCoordinatorFailsWithinItsTimeout) {
  KafkaSource source(unreachable_source());
  try {
    source.commit_sync({{{"events", 0}, 42}}, 500ms);
    ADD_FAILURE() << "commit without a reachable coordinator succeeded";
  } catch (const KafkaError& e) {
    EXPECT_NE(std::string(e.what()).find("events[0]@42"), std::string::npos) << e.what();
    EXPECT_FALSE(e.fatal());
  }
}

TEST(KafkaSource, AsynchronousCommitDoesNotThrow) {
  KafkaSource source(unreachable_source());
  source.commit_async({{{"events", 0}, 42}});
  EXPECT_TRUE(source.poll(10, 100ms).empty());
}

TEST(KafkaSource, DestructorWithoutCloseReturns) {
  auto source = std::make_unique<KafkaSource>(unreachable_source());
  EXPECT_TRUE(source->poll(1, 100ms).empty());
  source.reset();
}

TEST(KafkaSource, PausingAnUnassignedPartitionFailsNamingIt) {
  KafkaSource source(unreachable_source());
  try {
    source.pause({{"events", 3}});
    ADD_FAILURE() << "pausing an unassigned partition succeeded";
  } catch (const KafkaError& e) {
    EXPECT_NE(std::string(e.what()).find("events[3]"), std::string::npos) << e.what();
  }
}

// Counts callbacks; ASan reports any that reach it after it is destroyed.
struct CountingListener : RebalanceListener {
  void on_revoked(const std::vector<TopicPartition>&) override { ++revokes; }
  void on_lost(const std::vector<TopicPartition>& partitions) override { lost += partitions.size(); }
  void on_assigned(const std::vector<TopicPartition>& partitions) override { assigned += partitions.size(); }
  int revokes = 0;
  std::size_t lost = 0;
  std::size_t assigned = 0;
};

KafkaSourceOptions on_mock(const testing::MockKafkaCluster& cluster, const std::string& group) {
  KafkaSourceOptions options;
  options.bootstrap_servers = cluster.bootstrap_servers();
  options.group_id = group;
  options.topics = {"events"};
  options.close_timeout = 5s;
  // The mock group waits up to session.timeout.ms - 1 s for members to rejoin a rebalance.
  options.properties = {{"session.timeout.ms", "6000"}, {"heartbeat.interval.ms", "100"}};
  return options;
}

TEST(KafkaSourceOnMockCluster, CloseWithMessagesFetchedButNotPolledLeavesCleanly) {
  // The pipeline stops (or fails) with a fetch ahead of what it polled: librdkafka hands those
  // messages to close()'s queue, and serving it as callbacks used to abort the process.
  testing::MockKafkaCluster cluster;
  cluster.create_topic("events", 1);
  for (int i = 0; i < 20; ++i) cluster.produce("events", 0, "m" + std::to_string(i));
  KafkaSource source(on_mock(cluster, "hbingest-unit-prefetch"));
  std::vector<SourceMessage> first;
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (first.empty() && std::chrono::steady_clock::now() < deadline) first = source.poll(1, 100ms);
  ASSERT_EQ(first.size(), 1u) << "nothing consumed from the mock cluster";
  EXPECT_EQ(first[0].offset, 0);
  std::this_thread::sleep_for(200ms);  // let the fetcher queue the rest
  source.close(5s);
  EXPECT_THROW(source.poll(1, 0ms), std::logic_error);
  // Nothing was committed: the next member of the group starts from the beginning.
  EXPECT_EQ(cluster.committed_offset("hbingest-unit-prefetch", "events", 0), -1001);
}

TEST(KafkaSourceOnMockCluster, UnregisteredListenerIsNotCalledOnRebalanceOrClose) {
  testing::MockKafkaCluster cluster;
  cluster.create_topic("events", 2);
  const auto options = on_mock(cluster, "hbingest-unit-unregister");

  KafkaSource first(options);
  auto listener = std::make_unique<CountingListener>();
  first.set_rebalance_listener(listener.get());
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (listener->assigned == 0 && std::chrono::steady_clock::now() < deadline) (void)first.poll(10, 100ms);
  ASSERT_EQ(listener->assigned, 2u) << "no assignment from the mock cluster";
  first.set_rebalance_listener(nullptr);
  listener.reset();

  // A second member makes the group take partitions away from the first (an eager revoke).
  KafkaSource second(options);
  while ((second.assignment().empty() || first.assignment().size() != 1) &&
         std::chrono::steady_clock::now() < deadline) {
    (void)first.poll(10, 50ms);
    (void)second.poll(10, 50ms);
  }
  ASSERT_FALSE(second.assignment().empty()) << "the second member never got a partition";
  EXPECT_EQ(first.assignment().size(), 1u);
  first.close(5s);  // would revoke through the listener if one were registered
  EXPECT_THROW(first.poll(1, 0ms), std::logic_error);
}

TEST(KafkaSourceOnMockCluster, LostAssignmentReachesTheListenerAsLostNotRevoked) {
  // A consumer that does not poll within max.poll.interval.ms leaves the group: by the time it
  // polls again its partitions may be another member's, and a commit from on_revoked would rewind
  // that member's position.
  testing::MockKafkaCluster cluster;
  cluster.create_topic("events", 2);
  auto options = on_mock(cluster, "hbingest-unit-lost");
  // librdkafka wants at least session.timeout.ms (6 s: the mock group's first join alone takes 3 s
  // without heartbeats, which a shorter session does not survive).
  options.properties["max.poll.interval.ms"] = "6000";
  KafkaSource source(options);
  CountingListener listener;
  source.set_rebalance_listener(&listener);
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (listener.assigned == 0 && std::chrono::steady_clock::now() < deadline) (void)source.poll(10, 100ms);
  ASSERT_EQ(listener.assigned, 2u) << "no assignment from the mock cluster";
  std::this_thread::sleep_for(7s);  // no poll: max.poll.interval.ms passes
  while (listener.lost == 0 && listener.revokes == 0 && std::chrono::steady_clock::now() < deadline) {
    (void)source.poll(10, 100ms);
  }
  EXPECT_EQ(listener.lost, 2u);
  EXPECT_EQ(listener.revokes, 0);
  source.set_rebalance_listener(nullptr);
  source.close(5s);
}

TEST(KafkaSourceOnMockCluster, AFencedStaticMemberStopsNamingItsIdAndOwnsNothingMore) {
  // The broker fences a static member when another live one joins with its group.instance.id
  // (FENCED_INSTANCE_ID; here pushed as the answer to its heartbeats): librdkafka makes that fatal.
  // The source must say who took what, forget its assignment (commits would go to partitions it no
  // longer owns) and close without waiting for a group it cannot leave.
  testing::MockKafkaCluster cluster;
  cluster.create_topic("events", 2);
  auto options = on_mock(cluster, "hbingest-unit-fenced");
  options.group_instance_id = "ingest-a";
  KafkaSource source(options);
  CountingListener listener;
  source.set_rebalance_listener(&listener);
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (listener.assigned == 0 && std::chrono::steady_clock::now() < deadline) (void)source.poll(10, 100ms);
  ASSERT_EQ(listener.assigned, 2u) << "no assignment from the mock cluster";

  // Kafka's ApiKey of Heartbeat (librdkafka's RD_KAFKAP_Heartbeat is in a header it does not install).
  constexpr std::int16_t kHeartbeat = 12;
  rd_kafka_mock_push_request_errors(cluster.get(), kHeartbeat, 5, RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID,
                                    RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID, RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID,
                                    RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID, RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID);
  std::string error;
  while (error.empty() && std::chrono::steady_clock::now() < deadline) {
    try {
      (void)source.poll(10, 100ms);
    } catch (const KafkaError& e) {
      EXPECT_TRUE(e.fatal());
      EXPECT_EQ(e.code_name(), "FENCED_INSTANCE_ID");
      error = e.what();
    }
  }
  EXPECT_NE(error.find("another live member joined group hbingest-unit-fenced with group.instance.id ingest-a"),
            std::string::npos)
      << error;
  EXPECT_EQ(listener.revokes, 0) << "a revoke would commit partitions another member owns";
  EXPECT_TRUE(source.assignment().empty());
  EXPECT_THROW(source.commit_sync({{{"events", 0}, 1}}, 1s), KafkaError);
  EXPECT_THROW(source.commit_async({{{"events", 0}, 1}}), KafkaError);
  EXPECT_NO_THROW(source.close(5s)) << "nothing to leave: librdkafka's close would only answer _FATAL";
  EXPECT_EQ(cluster.committed_offset("hbingest-unit-fenced", "events", 0), -1001);
}

// What a CommitListener heard, in order.
struct RecordingCommitListener final : CommitListener {
  void on_commit_acknowledged(const std::vector<PartitionOffset>& offsets) override {
    for (const auto& po : offsets) acknowledged.push_back(po.offset);
  }
  void on_commit_failed(const std::vector<PartitionOffset>& offsets, const std::string& error) override {
    for (const auto& po : offsets) failed.push_back(po.offset);
    last_error = error;
  }
  std::vector<std::int64_t> acknowledged;
  std::vector<std::int64_t> failed;
  std::string last_error;
};

TEST(KafkaSource, TheAnswersToAsynchronousCommitsReachTheCommitListener) {
  testing::MockKafkaCluster cluster;
  cluster.create_topic("events", 1);
  KafkaSourceOptions options;
  options.bootstrap_servers = cluster.bootstrap_servers();
  options.group_id = "hbingest-unit-async-commit";
  options.topics = {"events"};
  options.close_timeout = 5s;
  KafkaSource source(options);
  RecordingCommitListener listener;
  source.set_commit_listener(&listener);
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (source.assignment().empty() && std::chrono::steady_clock::now() < deadline) source.poll(10, 100ms);
  ASSERT_FALSE(source.assignment().empty()) << "no assignment from the mock cluster";

  // The coordinator refuses the next OffsetCommit (Kafka protocol ApiKey 8) for good.
  constexpr std::int16_t kOffsetCommitApiKey = 8;
  rd_kafka_mock_push_request_errors(cluster.get(), kOffsetCommitApiKey, 1, RD_KAFKA_RESP_ERR_OFFSET_METADATA_TOO_LARGE);
  source.commit_async({{{"events", 0}, 1}});
  while (listener.failed.empty() && std::chrono::steady_clock::now() < deadline) source.poll(10, 100ms);
  EXPECT_EQ(listener.failed, std::vector<std::int64_t>{1});
  EXPECT_FALSE(listener.last_error.empty());
  EXPECT_TRUE(listener.acknowledged.empty());
  EXPECT_EQ(source.failed_async_commits(), 1u);

  // The next one is stored and acknowledged, and not counted as failed.
  source.commit_async({{{"events", 0}, 2}});
  while (listener.acknowledged.empty() && std::chrono::steady_clock::now() < deadline) source.poll(10, 100ms);
  EXPECT_EQ(listener.acknowledged, std::vector<std::int64_t>{2});
  EXPECT_EQ(source.committed({{"events", 0}}, 5s).at(0).offset, 2);
  EXPECT_EQ(source.failed_async_commits(), 1u);
  source.set_commit_listener(nullptr);
  source.close(5s);
}

TEST(KafkaSource, AFinalCommitIsNotOvertakenByAnEarlierOneLibrdkafkaRetries) {
  // librdkafka re-sends a commit refused as retriable after retry.backoff.ms, behind whatever was
  // sent meanwhile: a synchronous (final) commit sent while it waits must not be the one stored
  // first, or the earlier position lands over it and stays (nothing commits the partition again).
  testing::MockKafkaCluster cluster;
  cluster.create_topic("events", 1);
  KafkaSourceOptions options;
  options.bootstrap_servers = cluster.bootstrap_servers();
  options.group_id = "hbingest-unit-retried-commit";
  options.topics = {"events"};
  options.close_timeout = 5s;
  options.properties = {{"retry.backoff.ms", "1000"}};
  KafkaSource source(options);
  RecordingCommitListener listener;
  source.set_commit_listener(&listener);
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (source.assignment().empty() && std::chrono::steady_clock::now() < deadline) source.poll(10, 100ms);
  ASSERT_FALSE(source.assignment().empty()) << "no assignment from the mock cluster";

  constexpr std::int16_t kOffsetCommitApiKey = 8;
  rd_kafka_mock_push_request_errors(cluster.get(), kOffsetCommitApiKey, 1,
                                    RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS);
  source.commit_async({{{"events", 0}, 1}});  // refused once, re-sent by librdkafka a second later
  source.commit_sync({{{"events", 0}, 2}}, 10s);
  while (listener.acknowledged.empty() && std::chrono::steady_clock::now() < deadline) source.poll(10, 100ms);
  EXPECT_EQ(listener.acknowledged, std::vector<std::int64_t>{1}) << "the earlier commit is answered too";
  EXPECT_EQ(source.committed({{"events", 0}}, 5s).at(0).offset, 2) << "the final position is the one stored";
  source.set_commit_listener(nullptr);
  source.close(5s);
}

}  // namespace
}  // namespace hbingest::connectors
