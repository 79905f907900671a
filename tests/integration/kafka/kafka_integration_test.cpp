// Against a real broker: produce with KafkaProducer, consume with KafkaSource in a group, commit,
// resume, rebalance, and dead letters read back with their headers.

#include <gtest/gtest.h>
#include <librdkafka/rdkafka.h>
#include <unistd.h>

#include <array>
#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "hbingest/connectors/dead_letter_producer.h"
#include "hbingest/connectors/kafka_producer.h"
#include "hbingest/connectors/kafka_source.h"

namespace hbingest::connectors {
namespace {

using namespace std::chrono_literals;

// Generous: the first poll of a fresh group waits for the join and the first rebalance.
constexpr auto kDeadline = 90s;

std::string unique_suffix() {
  std::random_device rd;
  return std::to_string(::getpid()) + "-" + std::to_string(rd() % 1000000);
}

class KafkaIntegration : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* bootstrap = std::getenv("HBINGEST_KAFKA_BOOTSTRAP");
    ASSERT_TRUE(bootstrap != nullptr && *bootstrap != '\0')
        << "HBINGEST_KAFKA_BOOTSTRAP is not set: start a broker (stack/hbstack up) and export its "
           "address (eval \"$(stack/hbstack env)\")";
    bootstrap_ = bootstrap;
    suffix_ = unique_suffix();
  }

  KafkaProducerOptions producer_options() const {
    KafkaProducerOptions options;
    options.bootstrap_servers = bootstrap_;
    return options;
  }

  KafkaSourceOptions source_options(const std::string& topic, const std::string& group) const {
    KafkaSourceOptions options;
    options.bootstrap_servers = bootstrap_;
    options.group_id = group;
    options.topics = {topic};
    return options;
  }

  // Produces `n` records round-robin over `partitions`, payload "v<i>", and waits for every ack.
  void produce(const std::string& topic, int n, int partitions) {
    KafkaProducer producer(producer_options());
    int delivered = 0;
    std::string first_error;
    for (int i = 0; i < n; ++i) {
      const std::string key = "k" + std::to_string(i);
      const std::string payload = "v" + std::to_string(i);
      producer.produce({.topic = topic,
                        .key = key,
                        .payload = payload,
                        .headers = {},
                        .partition = i % partitions,
                        .owner = nullptr},
                       [&](const DeliveryReport& r) {
                         if (r.delivered) {
                           ++delivered;
                         } else if (first_error.empty()) {
                           first_error = r.error;
                         }
                       });
    }
    ASSERT_TRUE(producer.flush(60s));
    ASSERT_EQ(delivered, n) << first_error;
  }

  std::string bootstrap_;
  std::string suffix_;
};

// Records what the source reports, and can commit from inside on_revoked like the pipeline does.
class RecordingListener : public RebalanceListener {
 public:
  void on_revoked(const std::vector<TopicPartition>& partitions) override {
    ++revokes;
    for (const auto& tp : partitions) {
      revoked.insert(tp);
      owned.erase(tp);
    }
    if (on_revoke) on_revoke(partitions);
  }
  void on_lost(const std::vector<TopicPartition>& partitions) override {
    for (const auto& tp : partitions) owned.erase(tp);
  }
  void on_assigned(const std::vector<TopicPartition>& partitions) override {
    ++assigns;
    for (const auto& tp : partitions) owned.insert(tp);
  }
  int assigns = 0;
  int revokes = 0;
  std::set<TopicPartition> owned;
  std::set<TopicPartition> revoked;
  std::function<void(const std::vector<TopicPartition>&)> on_revoke;
};

std::vector<SourceMessage> poll_until(Source& source, std::size_t count) {
  std::vector<SourceMessage> out;
  const auto deadline = std::chrono::steady_clock::now() + kDeadline;
  while (out.size() < count && std::chrono::steady_clock::now() < deadline) {
    auto batch = source.poll(500, 200ms);
    for (auto& m : batch) out.push_back(std::move(m));
  }
  return out;
}

std::set<TopicPartition> all_partitions(const std::string& topic, int n) {
  std::set<TopicPartition> out;
  for (int p = 0; p < n; ++p) out.insert({topic, p});
  return out;
}

TEST_F(KafkaIntegration, ConsumeCommitAndResumeInTheSameGroup) {
  const std::string topic = "hbi-kafka-it-" + suffix_;
  const std::string group = "hbi-kafka-it-group-" + suffix_;
  constexpr int kPartitions = 3;
  constexpr int kMessages = 300;
  {
    KafkaProducer admin(producer_options());
    ASSERT_TRUE(admin.create_topic(topic, kPartitions, 1, {}, 30s));
    ASSERT_FALSE(admin.create_topic(topic, kPartitions, 1, {}, 30s)) << "second create must say 'exists'";
  }
  ASSERT_NO_FATAL_FAILURE(produce(topic, kMessages, kPartitions));

  // First consumer: reads everything, commits half of each partition, closes.
  std::map<std::int32_t, std::int64_t> committed_next;
  {
    auto options = source_options(topic, group);
    int statistics = 0;
    std::string last_stats;
    options.statistics_interval_ms = 100;
    options.on_statistics = [&](const std::string& json) {
      ++statistics;
      last_stats = json;
    };
    RecordingListener listener;  // declared first: it must outlive the source that calls it
    KafkaSource source(options);
    source.set_rebalance_listener(&listener);
    const auto messages = poll_until(source, kMessages);
    ASSERT_EQ(messages.size(), static_cast<std::size_t>(kMessages));
    EXPECT_EQ(listener.owned, all_partitions(topic, kPartitions));
    EXPECT_EQ(listener.assigns, 1);
    const auto assignment = source.assignment();
    EXPECT_EQ(std::set<TopicPartition>(assignment.begin(), assignment.end()), all_partitions(topic, kPartitions));

    std::set<std::string> payloads;
    std::map<std::int32_t, std::int64_t> count_per_partition;
    for (const auto& m : messages) {
      EXPECT_EQ(m.topic, topic);
      ASSERT_TRUE(m.key.has_value());
      // Produced with partition = i % 3: "k<i>" must have come back from partition i % 3.
      EXPECT_EQ(std::stoi(m.key->substr(1)) % kPartitions, m.partition) << *m.key;
      EXPECT_EQ("v" + m.key->substr(1), m.payload);
      EXPECT_GT(m.timestamp_ms, 0);
      EXPECT_EQ(m.offset, count_per_partition[m.partition]++) << "offsets arrive in order per partition";
      payloads.insert(m.payload.value_or("<null>"));
    }
    EXPECT_EQ(payloads.size(), static_cast<std::size_t>(kMessages));

    std::vector<PartitionOffset> commit;
    for (const auto& [partition, count] : count_per_partition) {
      committed_next[partition] = count / 2;
      commit.push_back({{topic, partition}, count / 2});
    }
    source.commit_sync(commit, 30s);
    const auto read_back = source.committed(assignment, 10s);
    for (const auto& po : read_back) EXPECT_EQ(po.offset, committed_next.at(po.tp.partition)) << po.tp.partition;
    // A later asynchronous commit of the same offsets must not be counted as failed.
    source.commit_async(commit);
    (void)source.poll(10, 500ms);
    EXPECT_EQ(source.failed_async_commits(), 0u);
    EXPECT_GT(statistics, 0);
    EXPECT_NE(last_stats.find("\"type\": \"consumer\""), std::string::npos) << last_stats.substr(0, 200);

    // Like the pipeline at shutdown: close() revokes, and on_revoked commits synchronously.
    std::vector<std::string> revoke_commit_errors;
    listener.on_revoke = [&](const std::vector<TopicPartition>&) {
      try {
        source.commit_sync(commit, 30s);
      } catch (const std::exception& e) {
        revoke_commit_errors.push_back(e.what());
      }
    };
    source.close(10s);
    EXPECT_EQ(listener.revoked, all_partitions(topic, kPartitions)) << "close() runs the revoke path";
    EXPECT_TRUE(revoke_commit_errors.empty()) << revoke_commit_errors.front();
    EXPECT_THROW(source.poll(1, 0ms), std::logic_error);
  }

  // Second consumer in the same group: exactly the uncommitted second halves, nothing before.
  std::size_t expected = 0;
  for (const auto& [partition, next] : committed_next)
    expected += static_cast<std::size_t>(kMessages / kPartitions - next);
  KafkaSource resumed(source_options(topic, group));
  auto messages = poll_until(resumed, expected);
  // Anything extra would be a redelivery of committed offsets; give it a moment to show up.
  for (auto& m : resumed.poll(500, 1s)) messages.push_back(std::move(m));
  ASSERT_EQ(messages.size(), expected);
  std::map<std::int32_t, std::int64_t> next_expected = committed_next;
  for (const auto& m : messages) EXPECT_EQ(m.offset, next_expected[m.partition]++) << m.partition;
  resumed.close(10s);
}

TEST_F(KafkaIntegration, PauseStopsDeliveryAndResumeContinuesWithoutGapsOrDuplicates) {
  const std::string topic = "hbi-kafka-pause-" + suffix_;
  {
    KafkaProducer admin(producer_options());
    ASSERT_TRUE(admin.create_topic(topic, 1, 1, {}, 30s));
  }
  ASSERT_NO_FATAL_FAILURE(produce(topic, 50, 1));
  KafkaSource source(source_options(topic, "hbi-kafka-pause-group-" + suffix_));
  std::vector<SourceMessage> messages;
  const auto deadline = std::chrono::steady_clock::now() + kDeadline;
  while (messages.empty() && std::chrono::steady_clock::now() < deadline) messages = source.poll(5, 200ms);
  ASSERT_FALSE(messages.empty());
  ASSERT_LE(messages.size(), 5u);
  source.pause({{topic, 0}});
  // Messages fetched before the pause must not be handed out while paused.
  const auto while_paused = source.poll(100, 1500ms);
  EXPECT_TRUE(while_paused.empty()) << while_paused.size() << " messages while paused";
  source.resume({{topic, 0}});
  for (auto& m : poll_until(source, 50 - messages.size())) messages.push_back(std::move(m));
  ASSERT_EQ(messages.size(), 50u);
  for (std::size_t i = 0; i < messages.size(); ++i) EXPECT_EQ(messages[i].offset, static_cast<std::int64_t>(i));
  source.close(10s);
}

class KafkaRebalance : public KafkaIntegration, public ::testing::WithParamInterface<const char*> {};

TEST_P(KafkaRebalance, SecondMemberTakesPartitionsAndRevokeRunsBeforeUnassign) {
  const std::string topic = "hbi-kafka-rb-" + suffix_;
  const std::string group = "hbi-kafka-rb-group-" + suffix_;
  constexpr int kPartitions = 4;
  {
    KafkaProducer admin(producer_options());
    ASSERT_TRUE(admin.create_topic(topic, kPartitions, 1, {}, 30s));
  }
  ASSERT_NO_FATAL_FAILURE(produce(topic, 40, kPartitions));

  auto options = source_options(topic, group);
  options.properties["partition.assignment.strategy"] = GetParam();
  options.properties["session.timeout.ms"] = "10000";
  options.properties["heartbeat.interval.ms"] = "1000";
  // Declared before the sources: the listeners (and what their callbacks use) must outlive the
  // sources, whose destructors close and revoke through them.
  std::vector<std::string> commit_errors;
  // Like the pipeline: commit what was consumed from the revoked partitions before letting go.
  std::map<TopicPartition, std::int64_t> next_offset;
  RecordingListener first_listener;
  KafkaSource first(options);
  first_listener.on_revoke = [&](const std::vector<TopicPartition>& partitions) {
    std::vector<PartitionOffset> offsets;
    for (const auto& tp : partitions) {
      if (const auto it = next_offset.find(tp); it != next_offset.end()) offsets.push_back({tp, it->second});
    }
    try {
      first.commit_sync(offsets, 30s);
    } catch (const std::exception& e) {
      commit_errors.push_back(e.what());
    }
  };
  first.set_rebalance_listener(&first_listener);
  for (const auto& m : poll_until(first, 40)) next_offset[{m.topic, m.partition}] = m.offset + 1;
  ASSERT_EQ(first_listener.owned, all_partitions(topic, kPartitions));

  RecordingListener second_listener;
  KafkaSource second(options);
  second.set_rebalance_listener(&second_listener);
  const auto deadline = std::chrono::steady_clock::now() + kDeadline;
  while (std::chrono::steady_clock::now() < deadline &&
         (second_listener.owned.empty() || first_listener.owned.size() + second_listener.owned.size() != kPartitions)) {
    for (const auto& m : first.poll(100, 100ms)) next_offset[{m.topic, m.partition}] = m.offset + 1;
    (void)second.poll(100, 100ms);
  }
  ASSERT_FALSE(second_listener.owned.empty()) << "the second member never got a partition";
  EXPECT_FALSE(first_listener.owned.empty());
  std::set<TopicPartition> both = first_listener.owned;
  for (const auto& tp : second_listener.owned)
    EXPECT_TRUE(both.insert(tp).second) << "assigned twice: " << tp.partition;
  EXPECT_EQ(both, all_partitions(topic, kPartitions));
  EXPECT_GE(first_listener.revokes, 1);
  EXPECT_TRUE(commit_errors.empty()) << commit_errors.front();
  // The sync commit inside on_revoked reached the coordinator: the second member resumes after
  // the 10 messages per partition the first one consumed, so it receives nothing old.
  const auto redelivered = second.poll(100, 2s);
  EXPECT_TRUE(redelivered.empty()) << redelivered.size() << " messages redelivered after a committed revoke";
  // At shutdown the pipeline commits from on_revoked inside close(); that must reach the group too.
  first.close(10s);
  EXPECT_TRUE(commit_errors.empty()) << "commit in on_revoked during close(): " << commit_errors.front();
  second.close(10s);
}

INSTANTIATE_TEST_SUITE_P(Assignors, KafkaRebalance, ::testing::Values("range", "cooperative-sticky"),
                         [](const auto& param_info) {
                           return std::string(param_info.param[0] == 'r' ? "Eager" : "Cooperative");
                         });

// Test-local RAII for the raw librdkafka consumer that reads the dead letters back.
struct RawDeleter {
  void operator()(rd_kafka_t* p) const {
    (void)rd_kafka_consumer_close(p);
    rd_kafka_destroy(p);
  }
  void operator()(rd_kafka_message_t* p) const { rd_kafka_message_destroy(p); }
  void operator()(rd_kafka_topic_partition_list_t* p) const { rd_kafka_topic_partition_list_destroy(p); }
};

std::map<std::string, std::string> headers_of(rd_kafka_message_t* msg) {
  std::map<std::string, std::string> out;
  rd_kafka_headers_t* headers = nullptr;
  if (rd_kafka_message_headers(msg, &headers) != RD_KAFKA_RESP_ERR_NO_ERROR) return out;
  const char* name = nullptr;
  const void* value = nullptr;
  std::size_t size = 0;
  for (std::size_t i = 0; rd_kafka_header_get_all(headers, i, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR;
       ++i) {
    EXPECT_FALSE(out.contains(name)) << "duplicate header " << name;
    out[name] = std::string(static_cast<const char*>(value), size);
  }
  return out;
}

TEST_F(KafkaIntegration, DeadLettersLandWithKafkaConnectHeaders) {
  const std::string dlq = "hbi-kafka-dlq-" + suffix_;
  {
    KafkaProducer admin(producer_options());
    // A 5 MB original needs the topic to accept it (broker default is about 1 MB).
    ASSERT_TRUE(admin.create_topic(dlq, 1, 1, {{"max.message.bytes", "10485760"}}, 30s));
  }
  DeadLetter small;
  small.original = {.topic = "events",
                    .partition = 2,
                    .offset = 4711,
                    .timestamp_ms = 1,
                    .key = "u000042",
                    .payload = std::string("{\"event_id\":\"lo\xff", 15)};
  small.stage = "decode";
  small.exception_class = "hbingest.InvalidJson";
  small.exception_message = "invalid UTF-8 at byte 14";
  DeadLetter big;
  big.original = {.topic = "events",
                  .partition = 0,
                  .offset = 9000000000,
                  .timestamp_ms = 1,
                  .key = std::nullopt,
                  .payload = std::string(5 * 1024 * 1024, 'x')};
  big.stage = "decode";
  big.exception_class = "hbingest.EventTooLarge";
  big.exception_message = "5242880 bytes > max_event_bytes 1048576";

  DeadLetterProducerOptions options;
  options.topic = dlq;
  options.max_letter_bytes = 6 * 1024 * 1024;  // whole letters here; truncation: tests/integration/python
  options.producer = producer_options();
  KafkaDeadLetterProducer producer(options);
  std::vector<std::pair<DeadLetterOutcome, std::string>> results;
  const auto record = [&](DeadLetterOutcome outcome, const std::string& e) { results.emplace_back(outcome, e); };
  producer.send(std::make_shared<DeadLetter>(small), record);
  producer.send(std::make_shared<DeadLetter>(big), record);
  DeadLetter tombstone = small;  // a dead-lettered tombstone stays one: a null value, not an empty one
  tombstone.original.payload.reset();
  tombstone.exception_class = "hbingest.Tombstone";
  producer.send(std::make_shared<DeadLetter>(tombstone), record);
  EXPECT_TRUE(results.empty()) << "done must not run inside send()";
  ASSERT_TRUE(producer.flush(60s));
  ASSERT_EQ(results.size(), 3u);
  for (const auto& [outcome, error] : results) EXPECT_EQ(outcome, DeadLetterOutcome::delivered) << error;

  std::array<char, 512> errstr{};
  rd_kafka_conf_t* conf = rd_kafka_conf_new();
  ASSERT_EQ(rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap_.c_str(), errstr.data(), errstr.size()),
            RD_KAFKA_CONF_OK);
  ASSERT_EQ(rd_kafka_conf_set(conf, "group.id", ("hbi-dlq-reader-" + suffix_).c_str(), errstr.data(), errstr.size()),
            RD_KAFKA_CONF_OK);
  std::unique_ptr<rd_kafka_t, RawDeleter> consumer(rd_kafka_new(RD_KAFKA_CONSUMER, conf, errstr.data(), errstr.size()));
  ASSERT_TRUE(consumer) << errstr.data();
  std::unique_ptr<rd_kafka_topic_partition_list_t, RawDeleter> assignment(rd_kafka_topic_partition_list_new(1));
  rd_kafka_topic_partition_list_add(assignment.get(), dlq.c_str(), 0)->offset = RD_KAFKA_OFFSET_BEGINNING;
  ASSERT_EQ(rd_kafka_assign(consumer.get(), assignment.get()), RD_KAFKA_RESP_ERR_NO_ERROR);

  std::vector<std::unique_ptr<rd_kafka_message_t, RawDeleter>> letters;
  const auto deadline = std::chrono::steady_clock::now() + kDeadline;
  while (letters.size() < 3 && std::chrono::steady_clock::now() < deadline) {
    std::unique_ptr<rd_kafka_message_t, RawDeleter> msg(rd_kafka_consumer_poll(consumer.get(), 200));
    if (!msg) continue;
    ASSERT_EQ(msg->err, RD_KAFKA_RESP_ERR_NO_ERROR) << rd_kafka_message_errstr(msg.get());
    letters.push_back(std::move(msg));
  }
  ASSERT_EQ(letters.size(), 3u);
  EXPECT_EQ(letters[2]->payload, nullptr) << "the tombstone's letter has a null value";
  EXPECT_EQ(headers_of(letters[2].get()).at("__connect.errors.exception.class.name"), "hbingest.Tombstone");

  const std::map<std::string, std::string> small_headers = {
      {"__connect.errors.topic", "events"},
      {"__connect.errors.partition", "2"},
      {"__connect.errors.offset", "4711"},
      {"__connect.errors.exception.class.name", "hbingest.InvalidJson"},
      {"__connect.errors.exception.message", "invalid UTF-8 at byte 14"},
      {"__hbingest.errors.stage", "decode"},
  };
  EXPECT_EQ(headers_of(letters[0].get()), small_headers);
  ASSERT_NE(letters[0]->key, nullptr);
  EXPECT_EQ(std::string(static_cast<const char*>(letters[0]->key), letters[0]->key_len), "u000042");
  EXPECT_EQ(std::string(static_cast<const char*>(letters[0]->payload), letters[0]->len), small.original.payload);

  const auto big_headers = headers_of(letters[1].get());
  EXPECT_EQ(big_headers.at("__connect.errors.offset"), "9000000000");
  EXPECT_EQ(big_headers.at("__connect.errors.partition"), "0");
  EXPECT_EQ(big_headers.at("__connect.errors.exception.class.name"), "hbingest.EventTooLarge");
  EXPECT_EQ(letters[1]->key, nullptr) << "a missing original key stays missing";
  ASSERT_EQ(letters[1]->len, big.original.payload->size());
  EXPECT_EQ(std::string(static_cast<const char*>(letters[1]->payload), letters[1]->len), big.original.payload);
}

// librdkafka's own producer: KafkaProducer gives no way to send a header without a value.
struct RdKafkaDeleter {
  void operator()(rd_kafka_t* rk) const { rd_kafka_destroy(rk); }
};

TEST_F(KafkaIntegration, KeysHeadersAndTombstonesArriveAsProduced) {
  const std::string topic = "hbi-kafka-inputs-" + suffix_;
  {
    KafkaProducer admin(producer_options());
    // A header of 1 MiB needs the topic to accept it (broker default is about 1 MB).
    ASSERT_TRUE(admin.create_topic(topic, 1, 1, {{"max.message.bytes", "10485760"}}, 30s));
  }
  struct Produced {
    std::optional<std::string> key;
    std::optional<std::string> value;
    std::vector<MessageHeader> headers;
  };
  const std::vector<Produced> produced = {
      {"k", "v", {{"a", "1"}, {"none", std::nullopt}, {"a", "2"}, {"empty", ""}, {"big", std::string(1 << 20, 'h')}}},
      {std::nullopt, "null key", {}},
      {"", "", {{"e", ""}}},                                              // empty key, empty value
      {std::string("\0\xff\x01k", 4), std::nullopt, {{"op", "delete"}}},  // a tombstone with a binary key
  };
  {
    char error[512];
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    int failures = 0;
    ASSERT_EQ(rd_kafka_conf_set(conf, "bootstrap.servers", bootstrap_.c_str(), error, sizeof error), RD_KAFKA_CONF_OK);
    ASSERT_EQ(rd_kafka_conf_set(conf, "message.max.bytes", "10485760", error, sizeof error), RD_KAFKA_CONF_OK);
    rd_kafka_conf_set_opaque(conf, &failures);
    rd_kafka_conf_set_dr_msg_cb(conf, [](rd_kafka_t*, const rd_kafka_message_t* m, void* opaque) {
      if (m->err != RD_KAFKA_RESP_ERR_NO_ERROR) ++*static_cast<int*>(opaque);
    });
    std::unique_ptr<rd_kafka_t, RdKafkaDeleter> rk(rd_kafka_new(RD_KAFKA_PRODUCER, conf, error, sizeof error));
    ASSERT_NE(rk, nullptr) << error;
    for (const auto& p : produced) {
      rd_kafka_headers_t* headers = rd_kafka_headers_new(p.headers.size());
      for (const auto& h : p.headers) {
        rd_kafka_header_add(headers, h.name.data(), static_cast<ssize_t>(h.name.size()),
                            h.value ? h.value->data() : nullptr, h.value ? static_cast<ssize_t>(h.value->size()) : 0);
      }
      // Null pointers for a null key and a null value (the macros cast their arguments unparenthesized).
      void* key = p.key ? const_cast<char*>(p.key->data()) : nullptr;
      const std::size_t key_size = p.key ? p.key->size() : 0;
      void* value = p.value ? const_cast<char*>(p.value->data()) : nullptr;
      const std::size_t value_size = p.value ? p.value->size() : 0;
      // rd_kafka_produceva, not the RD_KAFKA_V_* macros: those are GNU statement expressions, which
      // clang's -Wpedantic refuses.
      rd_kafka_vu_t args[6] = {};
      args[0].vtype = RD_KAFKA_VTYPE_TOPIC;
      args[0].u.cstr = topic.c_str();
      args[1].vtype = RD_KAFKA_VTYPE_PARTITION;
      args[1].u.i32 = 0;
      args[2].vtype = RD_KAFKA_VTYPE_KEY;
      args[2].u.mem.ptr = key;
      args[2].u.mem.size = key_size;
      args[3].vtype = RD_KAFKA_VTYPE_VALUE;
      args[3].u.mem.ptr = value;
      args[3].u.mem.size = value_size;
      args[4].vtype = RD_KAFKA_VTYPE_HEADERS;
      args[4].u.headers = headers;
      args[5].vtype = RD_KAFKA_VTYPE_MSGFLAGS;
      args[5].u.i32 = RD_KAFKA_MSG_F_COPY;
      rd_kafka_error_t* produce_error = rd_kafka_produceva(rk.get(), args, 6);
      const rd_kafka_resp_err_t err =
          produce_error != nullptr ? rd_kafka_error_code(produce_error) : RD_KAFKA_RESP_ERR_NO_ERROR;
      if (produce_error != nullptr) rd_kafka_error_destroy(produce_error);
      if (err != RD_KAFKA_RESP_ERR_NO_ERROR) rd_kafka_headers_destroy(headers);  // else the message owns them
      ASSERT_EQ(err, RD_KAFKA_RESP_ERR_NO_ERROR) << rd_kafka_err2str(err);
    }
    ASSERT_EQ(rd_kafka_flush(rk.get(), 60000), RD_KAFKA_RESP_ERR_NO_ERROR);
    ASSERT_EQ(failures, 0);
  }

  KafkaSource source(source_options(topic, "hbi-kafka-inputs-group-" + suffix_));
  const auto messages = poll_until(source, produced.size());
  ASSERT_EQ(messages.size(), produced.size());
  for (std::size_t i = 0; i < produced.size(); ++i) {
    SCOPED_TRACE("message " + std::to_string(i));
    EXPECT_EQ(messages[i].offset, static_cast<std::int64_t>(i));
    EXPECT_EQ(messages[i].key, produced[i].key) << "null, empty and binary keys apart";
    EXPECT_EQ(messages[i].payload, produced[i].value) << "a tombstone is a null value, not an empty one";
    ASSERT_EQ(messages[i].headers.size(), produced[i].headers.size());
    for (std::size_t h = 0; h < produced[i].headers.size(); ++h) {
      EXPECT_EQ(messages[i].headers[h].name, produced[i].headers[h].name) << h;
      EXPECT_EQ(messages[i].headers[h].value, produced[i].headers[h].value) << "header " << h << " in order";
    }
  }
}

}  // namespace
}  // namespace hbingest::connectors
