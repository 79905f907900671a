#pragma once
// In-memory stand-ins for the pipeline's seams (Source, RowSink, DeadLetterSink).

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <exception>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "hbingest/connectors/row_sink.h"
#include "hbingest/connectors/source.h"
#include "hbingest/ingest/pipeline.h"

namespace hbingest::testing {

// The pipeline thread drives it while the test thread watches it: every member takes the lock
// (the rebalance callbacks run outside it, as they call back into the pipeline).
// Its lifecycle mirrors KafkaSource: close() revokes the whole assignment through the registered
// listener (commit, pause and resume still work from there), poll() is refused from then on and
// the rest once closed; destroying a source that is still open closes it, so a listener that
// outlives its registration is called back after it is gone.
class FakeSource final : public connectors::Source {
 public:
  FakeSource() = default;
  FakeSource(const FakeSource&) = delete;
  FakeSource& operator=(const FakeSource&) = delete;
  ~FakeSource() override {
    try {
      close(std::chrono::milliseconds(0));
    } catch (...) {  // KafkaSource logs it and carries on: a destructor never throws
    }
  }

  void set_rebalance_listener(connectors::RebalanceListener* listener) noexcept override { listener_ = listener; }
  void set_commit_listener(connectors::CommitListener* listener) noexcept override { commit_listener_ = listener; }

  std::vector<connectors::SourceMessage> poll(std::size_t max_messages, std::chrono::milliseconds) override {
    if (state_ != State::open) throw std::logic_error("fake source: poll() during or after close()");
    if (!assigned_once_) {
      assigned_once_ = true;
      std::vector<connectors::TopicPartition> tps = assignment();
      if (listener_) listener_->on_assigned(tps);
    }
    answer_commits();
    rebalance(take(lose_next_), &connectors::RebalanceListener::on_lost);
    rebalance(take(revoke_next_), &connectors::RebalanceListener::on_revoked);
    if (const auto tps = take(assign_next_); !tps.empty()) {
      {
        std::lock_guard lock(mutex_);
        partitions_.insert(tps.begin(), tps.end());
      }
      if (listener_) listener_->on_assigned(tps);
    }
    std::vector<connectors::SourceMessage> out;
    {
      std::lock_guard lock(mutex_);
      for (auto it = queue_.begin(); it != queue_.end() && out.size() < max_messages;) {
        const connectors::TopicPartition tp{it->topic, it->partition};
        if (paused_.contains(tp) || !partitions_.contains(tp)) {
          ++it;
          continue;
        }
        out.push_back(*it);
        it = queue_.erase(it);
      }
    }
    // After the batch was taken, like a rebalance that librdkafka serves while a batch is polled.
    rebalance(take(revoke_after_batch_), &connectors::RebalanceListener::on_revoked);
    if (const auto tps = take(lose_and_assign_after_batch_); !tps.empty()) {
      rebalance(tps, &connectors::RebalanceListener::on_lost);
      {
        std::lock_guard lock(mutex_);
        partitions_.insert(tps.begin(), tps.end());
      }
      if (listener_) listener_->on_assigned(tps);
    }
    return out;
  }
  void commit_async(const std::vector<connectors::PartitionOffset>& offsets) override {
    ensure_not_closed("commit");
    std::lock_guard lock(mutex_);
    // Never answered: no coordinator yet, or a commit that librdkafka lost across an outage.
    if (coordinator_unreachable_ || drop_async_commits_) return;
    if (fail_async_commits_ > 0) {
      --fail_async_commits_;
      answers_.push_back({offsets, false});
      return;
    }
    record(offsets);
    answers_.push_back({offsets, true});
  }
  void commit_sync(const std::vector<connectors::PartitionOffset>& offsets,
                   std::chrono::milliseconds timeout) override {
    ensure_not_closed("commit");
    {
      std::lock_guard lock(mutex_);
      waits_granted_ += timeout;
      if (!coordinator_unreachable_) {
        record(offsets);
        return;
      }
    }
    // Like KafkaSource without a coordinator: no answer until the timeout.
    std::this_thread::sleep_for(timeout);
    throw std::runtime_error("fake source: commit: no answer from the group coordinator within " +
                             std::to_string(timeout.count()) + " ms");
  }
  void pause(const std::vector<connectors::TopicPartition>& tps) override {
    ensure_not_closed("pause");
    std::lock_guard lock(mutex_);
    for (const auto& tp : tps) paused_.insert(tp);
    ++pause_calls_;
  }
  void resume(const std::vector<connectors::TopicPartition>& tps) override {
    ensure_not_closed("resume");
    std::lock_guard lock(mutex_);
    for (const auto& tp : tps) paused_.erase(tp);
  }
  std::vector<connectors::TopicPartition> assignment() const override {
    std::lock_guard lock(mutex_);
    return {partitions_.begin(), partitions_.end()};
  }
  void close(std::chrono::milliseconds timeout) override {
    if (state_ != State::open) return;
    state_ = State::closing;
    struct MarkClosed {
      std::atomic<State>& state;
      ~MarkClosed() { state = State::closed; }
    } mark_closed{state_};
    if (listener_ != nullptr) {
      const auto owned = assignment();
      if (!owned.empty()) listener_->on_revoked(owned);
    }
    bool unreachable = false;
    {
      std::lock_guard lock(mutex_);
      waits_granted_ += timeout;
      unreachable = coordinator_unreachable_;
    }
    // Like KafkaSource: leaving the group waits for the coordinator until the timeout.
    if (unreachable) std::this_thread::sleep_for(timeout);
  }

  // From now on commits get no answer (synchronous ones wait out their timeout and throw) and
  // close() waits out its timeout, as with a group coordinator that cannot be reached.
  void make_coordinator_unreachable() {
    std::lock_guard lock(mutex_);
    coordinator_unreachable_ = true;
  }
  // While set, asynchronous commits vanish: neither stored nor ever answered.
  void drop_async_commits(bool drop) {
    std::lock_guard lock(mutex_);
    drop_async_commits_ = drop;
  }
  // The next `count` asynchronous commits are answered with a failure (and not stored).
  void fail_next_async_commits(int count) {
    std::lock_guard lock(mutex_);
    fail_async_commits_ = count;
  }
  // The sum of the timeouts handed to commit_sync() and close(): what they may block for.
  std::chrono::milliseconds waits_granted() const {
    std::lock_guard lock(mutex_);
    return waits_granted_;
  }

  // Before the first poll: part of the initial assignment. Later the assignment changes only
  // through the rebalances below.
  void add_partition(const std::string& topic, int partition) {
    std::lock_guard lock(mutex_);
    if (!assigned_once_) partitions_.insert({topic, partition});
  }
  // Rebalances served by the next poll: revoke (on_revoked, then the partitions are gone and their
  // queued messages with them: the next owner reads them), lose (the same through on_lost) and
  // assign (on_assigned; messages pushed for the partitions are delivered from then on).
  void revoke_at_next_poll(std::vector<connectors::TopicPartition> tps) { schedule(revoke_next_, std::move(tps)); }
  void lose_at_next_poll(std::vector<connectors::TopicPartition> tps) { schedule(lose_next_, std::move(tps)); }
  void assign_at_next_poll(std::vector<connectors::TopicPartition> tps) { schedule(assign_next_, std::move(tps)); }
  // A revoke served after the next poll took its batch: the batch still holds messages of the
  // revoked partitions, as KafkaSource's can (librdkafka serves a rebalance mid-batch).
  void revoke_after_next_batch(std::vector<connectors::TopicPartition> tps) {
    schedule(revoke_after_batch_, std::move(tps));
  }
  // Lost and assigned again after the next poll took its batch: the batch holds offsets read
  // before the rebalance, and the partition is read again from its committed offset after it.
  void lose_and_assign_after_next_batch(std::vector<connectors::TopicPartition> tps) {
    schedule(lose_and_assign_after_batch_, std::move(tps));
  }
  // Rebalances served so far (revokes and losses).
  int revocations() const { return revocations_; }
  // Another group member commits (e.g. the partition's next owner).
  void commit_as_other_member(const connectors::TopicPartition& tp, std::int64_t offset) {
    std::lock_guard lock(mutex_);
    committed_[tp] = offset;
  }
  // Every offset this source committed for `tp`, in order.
  std::vector<std::int64_t> commits_of(const connectors::TopicPartition& tp) const {
    std::lock_guard lock(mutex_);
    std::vector<std::int64_t> out;
    for (const auto& po : commit_log_) {
      if (po.tp == tp) out.push_back(po.offset);
    }
    return out;
  }
  void push(const std::string& topic, int partition, std::int64_t offset, std::string payload, std::int64_t ts = -1) {
    add_partition(topic, partition);
    std::lock_guard lock(mutex_);
    connectors::SourceMessage m;
    m.topic = topic;
    m.partition = partition;
    m.offset = offset;
    m.timestamp_ms = ts;
    m.payload = std::move(payload);
    queue_.push_back(std::move(m));
  }
  // A message as given: a key, headers, a null value (a tombstone)...
  void push_message(connectors::SourceMessage message) {
    add_partition(message.topic, message.partition);
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(message));
  }
  std::size_t remaining() const {
    std::lock_guard lock(mutex_);
    return queue_.size();
  }
  bool is_paused(const connectors::TopicPartition& tp) const {
    std::lock_guard lock(mutex_);
    return paused_.contains(tp);
  }
  int pause_calls() const {
    std::lock_guard lock(mutex_);
    return pause_calls_;
  }
  // The committed next-offset of `tp`, or -1 when none was committed.
  std::int64_t committed(const connectors::TopicPartition& tp) const {
    std::lock_guard lock(mutex_);
    const auto it = committed_.find(tp);
    return it == committed_.end() ? -1 : it->second;
  }
  bool closed() const { return state_ == State::closed; }

 private:
  enum class State { open, closing, closed };
  void ensure_not_closed(const char* operation) const {
    if (state_ == State::closed) throw std::logic_error(std::string("fake source: ") + operation + "() after close()");
  }

  // Under the lock.
  void record(const std::vector<connectors::PartitionOffset>& offsets) {
    for (const auto& po : offsets) {
      committed_[po.tp] = po.offset;
      commit_log_.push_back(po);
    }
  }
  using Callback = void (connectors::RebalanceListener::*)(const std::vector<connectors::TopicPartition>&);
  void schedule(std::vector<connectors::TopicPartition>& slot, std::vector<connectors::TopicPartition> tps) {
    std::lock_guard lock(mutex_);
    slot.insert(slot.end(), tps.begin(), tps.end());
  }
  std::vector<connectors::TopicPartition> take(std::vector<connectors::TopicPartition>& slot) {
    std::lock_guard lock(mutex_);
    return std::exchange(slot, {});
  }
  // The answers to asynchronous commits, from poll() like librdkafka's offset_commit_cb; outside
  // the lock, as the listener may commit again.
  void answer_commits() {
    std::vector<Answer> answers;
    {
      std::lock_guard lock(mutex_);
      answers = std::exchange(answers_, {});
    }
    for (const auto& answer : answers) {
      if (commit_listener_ == nullptr) continue;
      if (answer.stored) {
        commit_listener_->on_commit_acknowledged(answer.offsets);
      } else {
        commit_listener_->on_commit_failed(answer.offsets, "fake source: commit refused");
      }
    }
  }
  // Outside the lock: the listener calls back into commit_sync(), pause() and assignment().
  void rebalance(const std::vector<connectors::TopicPartition>& tps, Callback callback) {
    if (tps.empty()) return;
    if (listener_) (listener_->*callback)(tps);
    {
      std::lock_guard lock(mutex_);
      // The pause stays: librdkafka keeps an application's pause on the partition through a revoke
      // and a later assignment of it (its assignment code resets only its own rebalance pause).
      for (const auto& tp : tps) partitions_.erase(tp);
      std::erase_if(queue_, [&](const connectors::SourceMessage& m) {
        return std::find(tps.begin(), tps.end(), connectors::TopicPartition{m.topic, m.partition}) != tps.end();
      });
    }
    ++revocations_;
  }

  mutable std::mutex mutex_;
  std::map<connectors::TopicPartition, std::int64_t> committed_;
  std::vector<connectors::PartitionOffset> commit_log_;
  std::vector<connectors::TopicPartition> revoke_next_;
  std::vector<connectors::TopicPartition> lose_next_;
  std::vector<connectors::TopicPartition> assign_next_;
  std::vector<connectors::TopicPartition> revoke_after_batch_;
  std::vector<connectors::TopicPartition> lose_and_assign_after_batch_;
  std::atomic<int> revocations_{0};
  int pause_calls_ = 0;
  bool coordinator_unreachable_ = false;
  bool drop_async_commits_ = false;
  int fail_async_commits_ = 0;
  struct Answer {
    std::vector<connectors::PartitionOffset> offsets;
    bool stored;
  };
  std::vector<Answer> answers_;
  connectors::CommitListener* commit_listener_ = nullptr;
  std::chrono::milliseconds waits_granted_{0};
  std::atomic<State> state_{State::open};
  connectors::RebalanceListener* listener_ = nullptr;
  std::set<connectors::TopicPartition> partitions_;
  std::set<connectors::TopicPartition> paused_;
  std::deque<connectors::SourceMessage> queue_;
  std::atomic<bool> assigned_once_{false};
};

// A shared in-memory "table" that several FakeSinks write into.
struct FakeTable {
  std::mutex mutex;
  std::map<std::string, connectors::RowMutation> rows;  // key → last write
  std::size_t writes = 0;
  bool down = false;                  // every write throws a retriable error
  std::set<std::string> poison_rows;  // rows rejected for good
  std::string reject_reason = "fake: row rejected";
  int transient_failures = 0;                // the next writes throw a retriable error (RegionTooBusy-like)
  std::chrono::milliseconds write_delay{0};  // every write takes this long (a gateway's round trip)
  // Every mutation applied, in order: its row, kind and timestamp (what HBase's markers compare).
  struct Applied {
    std::string row;
    connectors::MutationKind kind;
    std::int64_t timestamp_ms;
  };
  std::vector<Applied> applied;
};

class FakeSink final : public connectors::RowSink {
 public:
  explicit FakeSink(FakeTable& table) : table_(table) {}
  std::vector<connectors::RejectedRow> write(const std::string&, std::span<const connectors::RowMutation> rows,
                                             const connectors::WriteOptions&) override {
    // Outside the lock, so writers overlap as they do on a gateway's connections.
    if (table_.write_delay.count() > 0) std::this_thread::sleep_for(table_.write_delay);
    std::lock_guard lock(table_.mutex);
    if (table_.down) throw connectors::HBaseError("fake outage", "fake:1", "putMultiple", true);
    if (table_.transient_failures > 0) {
      --table_.transient_failures;
      throw connectors::HBaseError("fake: Over memstore limit=512.0 M", "fake:1", "putMultiple", true);
    }
    std::vector<connectors::RejectedRow> rejected;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (table_.poison_rows.contains(rows[i].row)) {
        rejected.push_back({i, table_.reject_reason});
        continue;
      }
      apply(rows[i]);
    }
    ++table_.writes;
    return rejected;
  }
  std::string endpoint() const override { return "fake:1"; }

 private:
  // A put replaces the row (the last write), minus its deleted columns; a delete_row removes a row
  // written at or before its timestamp (HBase's rule, at row granularity).
  void apply(const connectors::RowMutation& mutation) {
    table_.applied.push_back({mutation.row, mutation.kind, mutation.timestamp_ms});
    if (mutation.kind == connectors::MutationKind::delete_row) {
      const auto it = table_.rows.find(mutation.row);
      if (it != table_.rows.end() && it->second.timestamp_ms <= mutation.timestamp_ms) table_.rows.erase(it);
      return;
    }
    auto& stored = table_.rows[mutation.row];
    stored = mutation;
    std::erase_if(stored.cells, [&](const connectors::Cell& cell) {
      return std::any_of(
          mutation.deleted_columns.begin(), mutation.deleted_columns.end(),
          [&](const connectors::ColumnRef& c) { return c.family == cell.family && c.qualifier == cell.qualifier; });
    });
  }

  FakeTable& table_;
};

// Knobs are set before the pipeline starts, except the ones the lock guards (set_failing,
// max_record_bytes and rejected_offsets, which a test may change while the pipeline runs).
class FakeDeadLetters final : public connectors::DeadLetterSink {
 public:
  using Clock = std::chrono::steady_clock;

  void send(std::shared_ptr<const connectors::DeadLetter> letter, Done done) override {
    {
      std::lock_guard lock(mutex_);
      attempts_.emplace_back(letter->original.offset, Clock::now());
    }
    pending_.push_back({std::move(letter), std::move(done)});
  }
  void poll(std::chrono::milliseconds) override {
    if (hold) return;
    auto pending = std::exchange(pending_, {});
    for (auto& [letter, done] : pending) {
      const auto [outcome, error] = verdict(*letter);
      if (outcome == connectors::DeadLetterOutcome::delivered) {
        std::lock_guard lock(mutex_);
        delivered.push_back(*letter);
      }
      done(outcome, error);
    }
  }
  // Read by the test thread while the pipeline thread delivers.
  std::size_t delivered_count() const {
    std::lock_guard lock(mutex_);
    return delivered.size();
  }
  bool flush(std::chrono::milliseconds timeout) override {
    poll(timeout);
    return pending_.empty();
  }

  // Letters of these source offsets fail (as with the broker down) until cleared.
  void set_failing(std::set<std::int64_t> offsets) {
    std::lock_guard lock(mutex_);
    failing_ = std::move(offsets);
  }
  // Like a topic's max.message.bytes: a letter whose payload is longer is rejected, unless it is
  // sent with its headers only.
  void set_max_record_bytes(std::size_t bytes) {
    std::lock_guard lock(mutex_);
    max_record_bytes_ = bytes;
  }
  // Letters of these source offsets are rejected in any form.
  void set_rejected(std::set<std::int64_t> offsets) {
    std::lock_guard lock(mutex_);
    rejected_ = std::move(offsets);
  }
  // When each send of the letter for source offset `offset` happened.
  std::vector<Clock::time_point> attempts_of(std::int64_t offset) const {
    std::lock_guard lock(mutex_);
    std::vector<Clock::time_point> out;
    for (const auto& [o, at] : attempts_)
      if (o == offset) out.push_back(at);
    return out;
  }

  std::vector<connectors::DeadLetter> delivered;  // read it after the pipeline stopped
  bool hold = false;                              // keep letters unacknowledged; set before the pipeline starts
  int fail_next = 0;                              // the next sends fail

 private:
  std::pair<connectors::DeadLetterOutcome, std::string> verdict(const connectors::DeadLetter& letter) {
    std::lock_guard lock(mutex_);
    const auto offset = letter.original.offset;
    if (fail_next > 0) {
      --fail_next;
      return {connectors::DeadLetterOutcome::failed, "fake: broker down"};
    }
    if (failing_.contains(offset)) return {connectors::DeadLetterOutcome::failed, "fake: no ACL"};
    if (rejected_.contains(offset)) return {connectors::DeadLetterOutcome::rejected, "fake: INVALID_RECORD"};
    if (!letter.headers_only && letter.original.payload_bytes().size() > max_record_bytes_) {
      return {connectors::DeadLetterOutcome::rejected, "fake: MSG_SIZE_TOO_LARGE"};
    }
    return {connectors::DeadLetterOutcome::delivered, ""};
  }

  mutable std::mutex mutex_;
  std::vector<std::pair<std::shared_ptr<const connectors::DeadLetter>, Done>> pending_;
  std::vector<std::pair<std::int64_t, Clock::time_point>> attempts_;
  std::set<std::int64_t> failing_;
  std::set<std::int64_t> rejected_;
  std::size_t max_record_bytes_ = std::numeric_limits<std::size_t>::max();
};

// Runs `pipeline` on its own thread; `until` is polled on this thread until it returns true (then
// the pipeline is asked to stop), until run() returns or throws, or until `deadline` passes.
// Returns what run() threw, or null.
inline std::exception_ptr run_pipeline_until(ingest::Pipeline& pipeline, const std::function<bool()>& until,
                                             std::chrono::milliseconds deadline) {
  std::atomic<bool> stop{false};
  std::atomic<bool> finished{false};
  std::exception_ptr failure;  // written by the pipeline thread before `finished`, read after join
  std::thread thread([&] {
    try {
      pipeline.run(stop);
    } catch (...) {
      failure = std::current_exception();
    }
    finished = true;
  });
  const auto give_up = std::chrono::steady_clock::now() + deadline;
  while (!finished && !until() && std::chrono::steady_clock::now() < give_up) {
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  stop = true;
  thread.join();
  return failure;
}

}  // namespace hbingest::testing
