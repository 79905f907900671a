#pragma once
// Source over a librdkafka high-level consumer (consumer group, manual offset commits).

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "hbingest/connectors/source.h"

namespace hbingest::connectors {

struct KafkaSourceOptions {
  std::string bootstrap_servers;  // overrides a "bootstrap.servers" property when not empty
  std::string group_id;           // overrides a "group.id" property when not empty
  // Static membership (librdkafka's group.instance.id) when not empty; overrides the property. When
  // the broker fences this member (another live member joined with the same id), poll() throws a
  // fatal KafkaError naming the id, and from then on the source owns nothing (assignment() is
  // empty), refuses every commit and closes without leaving the group.
  std::string group_instance_id;
  // Topic names, or a single "^regex" (librdkafka subscribes to every matching topic).
  std::vector<std::string> topics;
  // Passed verbatim to rd_kafka_conf_set (SSL, SASL, tuning). A rejected key or value throws
  // std::invalid_argument naming the key. enable.auto.commit and enable.auto.offset.store may
  // only be "false": the pipeline commits itself, after the write is acknowledged.
  std::map<std::string, std::string> properties;
  // 0 disables statistics. Otherwise librdkafka's statistics JSON is passed to on_statistics
  // from inside poll(), on the polling thread.
  int statistics_interval_ms = 0;
  std::function<void(const std::string& stats_json)> on_statistics;
  // Above zero, the constructor first waits up to this long for a broker to answer (TLS handshake
  // and SASL login included): a TLS or SASL failure before that throws KafkaError naming the cause
  // and the settings (see kafka_security.h); no answer at all only logs a warning (the broker may
  // come later). Zero: no check, as before.
  std::chrono::milliseconds startup_check_timeout{0};
  // Called with the operator's sentence (describe_security_failure) for each TLS or SASL failure
  // librdkafka reports after the constructor returned (each is also logged, rate-limited): a
  // certificate or password changed under a running daemon. librdkafka keeps retrying; the owner
  // decides what it means (a metric, readiness). From inside poll(), guarded like on_statistics.
  std::function<void(const std::string& description)> on_security_error;
  // Bound on the close that the destructor performs when close() was not called: past it the
  // consumer leaves without a clean group exit (the coordinator notices after session.timeout.ms).
  std::chrono::milliseconds close_timeout{10000};
};

// Contract: see Source. Rebalances (eager or cooperative) call the RebalanceListener from inside
// poll(): on_revoked before the partitions are given up (commit(sync) works there), on_lost
// instead when librdkafka reports the assignment lost (rd_kafka_assignment_lost), on_assigned
// after they are assigned (consumption resumes from the committed offsets; pause state is not
// kept across a rebalance). The messages poll() returns may include some of partitions revoked or
// lost during that call, collected before the rebalance was served. close() calls on_revoked once
// with the whole assignment while still a group member, then leaves the group (a static member,
// options.group_instance_id, stays in it until session.timeout.ms, so that it gets the same
// partitions back when it returns); commits are allowed until close() returns, poll() is not.
// A synchronous commit waits on a private queue, so its timeout holds even without a coordinator
// (librdkafka's own synchronous commit would wait forever).
// The answer to commit_async reaches the CommitListener from inside poll() (or at once, from
// commit_async(), when librdkafka refuses the request outright); every failure is also logged,
// rate-limited, and counted.
// Messages fetched but not yet polled when close() starts are dropped, never committed. Without a
// listener (none set, or unregistered with nullptr) rebalances and close() only assign and
// unassign. An exception thrown by the listener or on_statistics never crosses librdkafka: it
// is logged and the first one is rethrown from the next poll().
// Thread safety: one thread drives the object (poll, commit, pause, resume, close). Neither
// copyable nor movable (librdkafka holds a pointer to it).
class KafkaSource final : public Source {
 public:
  // Validates the options, runs the startup check when options.startup_check_timeout is set, and
  // subscribes. An unreachable broker shows up as empty polls and rate-limited log lines.
  explicit KafkaSource(KafkaSourceOptions options);
  ~KafkaSource() override;  // closes (bounded by options.close_timeout) if close() was not called; never throws
  KafkaSource(const KafkaSource&) = delete;
  KafkaSource& operator=(const KafkaSource&) = delete;
  KafkaSource(KafkaSource&&) = delete;
  KafkaSource& operator=(KafkaSource&&) = delete;

  void set_rebalance_listener(RebalanceListener* listener) noexcept override;
  void set_commit_listener(CommitListener* listener) noexcept override;
  std::vector<SourceMessage> poll(std::size_t max_messages, std::chrono::milliseconds timeout) override;
  void commit_async(const std::vector<PartitionOffset>& offsets) override;
  void commit_sync(const std::vector<PartitionOffset>& offsets, std::chrono::milliseconds timeout) override;
  void pause(const std::vector<TopicPartition>& partitions) override;
  void resume(const std::vector<TopicPartition>& partitions) override;
  std::vector<TopicPartition> assignment() const override;
  void close(std::chrono::milliseconds timeout) override;

  // False when the startup check ran and no broker answered within its timeout (the owner may skip
  // waiting again for its other clients); true otherwise.
  bool broker_answered_at_startup() const noexcept;
  // Asynchronous commits that the broker refused so far (each is also logged, rate-limited).
  std::uint64_t failed_async_commits() const noexcept;
  // The committed next-offsets of `partitions` as the group coordinator has them (-1001 when
  // none), waiting at most `timeout`. Throws KafkaError on failure.
  std::vector<PartitionOffset> committed(const std::vector<TopicPartition>& partitions,
                                         std::chrono::milliseconds timeout) const;

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hbingest::connectors
