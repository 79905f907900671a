#pragma once
// The consume seam: the pipeline reads through a Source, so unit tests can drive it with a fake.

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

namespace hbingest::connectors {

struct TopicPartition {
  std::string topic;
  std::int32_t partition = 0;
  friend auto operator<=>(const TopicPartition&, const TopicPartition&) = default;
};

// A TopicPartition that does not own its topic: what the pipeline looks partitions up with, per
// message, without copying the topic's name (a heap string past 15 bytes; perf showed the copies).
// Valid while the string it views is.
struct TopicPartitionRef {
  std::string_view topic;
  std::int32_t partition = 0;
  TopicPartitionRef(std::string_view t, std::int32_t p) : topic(t), partition(p) {}
  // Implicit on purpose: every TopicPartition is usable where a reference to one is asked for.
  TopicPartitionRef(const TopicPartition& tp)  // NOLINT(google-explicit-constructor)
      : topic(tp.topic), partition(tp.partition) {}
};

// TopicPartition's own order, for sets and maps looked up by TopicPartitionRef as well.
struct TopicPartitionLess {
  using is_transparent = void;
  bool operator()(TopicPartitionRef a, TopicPartitionRef b) const {
    return std::tie(a.topic, a.partition) < std::tie(b.topic, b.partition);
  }
};

struct PartitionOffset {
  TopicPartition tp;
  std::int64_t offset = 0;  // the next offset to consume (Kafka commit semantics: last stored + 1)
};

// A Kafka record header. Names may repeat; a header without a value (null) is not one with "".
struct MessageHeader {
  std::string name;
  std::optional<std::string> value;
  friend bool operator==(const MessageHeader&, const MessageHeader&) = default;
};

struct SourceMessage {
  std::string topic;
  std::int32_t partition = 0;
  std::int64_t offset = 0;
  std::int64_t timestamp_ms = -1;  // -1: none
  std::optional<std::string> key;  // nullopt: a null key (not the same as an empty one)
  // nullopt: a null value, a tombstone (compacted topics: "delete this key"), not an empty value.
  std::optional<std::string> payload;
  std::vector<MessageHeader> headers{};  // in the order the producer gave them; empty when none

  // The value's bytes, a tombstone's as none.
  std::string_view payload_bytes() const { return payload ? std::string_view(*payload) : std::string_view(); }
};

// Called from inside Source::poll() on the polling thread. A poll() that serves a revoke or a loss
// may still return messages of those partitions that it collected before: they belong to the
// partitions' next owner, and the listener's owner must ignore them.
class RebalanceListener {
 public:
  virtual ~RebalanceListener() = default;
  // Before the partitions are given up: flush and commit what belongs to them.
  virtual void on_revoked(const std::vector<TopicPartition>& partitions) = 0;
  // The partitions were already taken away (session timeout, max.poll.interval.ms exceeded): they
  // may belong to another member by now, so nothing may be committed for them. Drop them.
  virtual void on_lost(const std::vector<TopicPartition>& partitions) = 0;
  // Consumption resumes at the committed offsets, which may lie below offsets seen in an earlier
  // assignment of the same partitions.
  virtual void on_assigned(const std::vector<TopicPartition>& partitions) = 0;
};

// What became of the offsets handed to Source::commit_async: the group coordinator's answer,
// called from inside Source::poll() or Source::commit_sync() on the polling thread. An asynchronous
// commit may also never be answered (librdkafka 2.0.2 dropped one made across a 30 s broker black
// hole without calling back), so an owner takes offsets as committed only once they are
// acknowledged, and sends again what stays unanswered. Answers come in the order the coordinator
// stored the commits, which is not the order they were made in (librdkafka re-sends some by
// itself): the position acknowledged last is the one stored.
class CommitListener {
 public:
  virtual ~CommitListener() = default;
  // Stored by the group coordinator.
  virtual void on_commit_acknowledged(const std::vector<PartitionOffset>& offsets) = 0;
  // Refused, or failed on the way; `error` says why.
  virtual void on_commit_failed(const std::vector<PartitionOffset>& offsets, const std::string& error) = 0;
};

// Not thread-safe: one thread polls, commits, pauses and resumes.
class Source {
 public:
  virtual ~Source() = default;
  // The listener must stay valid until it is replaced or unregistered with nullptr; a listener
  // unregisters itself before it goes (from its destructor, hence noexcept). With none, rebalances
  // and close() only assign and unassign.
  virtual void set_rebalance_listener(RebalanceListener* listener) noexcept = 0;
  // The same contract for the answers to commit_async (none set: they are only logged).
  virtual void set_commit_listener(CommitListener* listener) noexcept = 0;
  // Up to max_messages messages, waiting at most `timeout` for the first. Throws on fatal errors.
  virtual std::vector<SourceMessage> poll(std::size_t max_messages, std::chrono::milliseconds timeout) = 0;
  // Hands the next-offsets to the background commit; its answer reaches the CommitListener.
  virtual void commit_async(const std::vector<PartitionOffset>& offsets) = 0;
  // Commits the next-offsets and waits at most `timeout` for the group coordinator's answer: the
  // caller's time budget (a rebalance, the shutdown) bounds it. Throws on failure or timeout.
  // Answers to earlier asynchronous commits still due are awaited first (up to half the time), so
  // that none is stored after this one.
  virtual void commit_sync(const std::vector<PartitionOffset>& offsets, std::chrono::milliseconds timeout) = 0;
  virtual void pause(const std::vector<TopicPartition>& partitions) = 0;
  virtual void resume(const std::vector<TopicPartition>& partitions) = 0;
  virtual std::vector<TopicPartition> assignment() const = 0;
  // Leaves the group (revokes partitions through the listener), giving up on a clean exit after
  // `timeout`: the group then notices the member is gone after its session timeout.
  virtual void close(std::chrono::milliseconds timeout) = 0;
};

// One dead letter: the original bytes plus where they came from and why they were rejected.
struct DeadLetter {
  SourceMessage original;
  std::string stage;            // decode, key, route, write
  std::string exception_class;  // e.g. "hbingest.InvalidJson"
  std::string exception_message;
  // Set once the full letter was rejected: the sink then sends the headers alone, with the
  // original's size and SHA-256 in place of its bytes (the original stays in the source topic).
  bool headers_only = false;
  // The schema id the original's Confluent frame named (Avro, Protobuf, JSON Schema), once read:
  // the letter carries it as __hbingest.errors.schema.id.
  std::optional<std::int32_t> schema_id;
};

// How one send of a dead letter ended.
enum class DeadLetterOutcome {
  delivered,  // acknowledged by the broker (acks=all)
  failed,     // not stored this time, may be later: broker down, topic missing, no ACL, timed out
  rejected,   // the record itself was refused (too large, invalid): the same record fails again
};

// Asynchronous dead-letter producer. Thread-compatible: used from the pipeline thread.
class DeadLetterSink {
 public:
  using Done = std::function<void(DeadLetterOutcome outcome, const std::string& error)>;
  virtual ~DeadLetterSink() = default;
  // Queues the letter; `done` runs from poll() once the broker acknowledged (or refused) it. The
  // sink shares the letter instead of copying it, and reads it no more once `done` runs.
  virtual void send(std::shared_ptr<const DeadLetter> letter, Done done) = 0;
  // Serves delivery reports, running `done` callbacks.
  virtual void poll(std::chrono::milliseconds timeout) = 0;
  // Waits until every queued letter is acknowledged or the timeout passes. Returns true when drained.
  virtual bool flush(std::chrono::milliseconds timeout) = 0;
};

}  // namespace hbingest::connectors
