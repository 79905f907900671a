#pragma once
// In-memory stand-ins for the pipeline's seams (Source, RowSink, DeadLetterSink).

#include <deque>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>

#include "hbingest/connectors/row_sink.h"
#include "hbingest/connectors/source.h"

namespace hbingest::testing {

class FakeSource final : public connectors::Source {
 public:
  void set_rebalance_listener(connectors::RebalanceListener* listener) override { listener_ = listener; }

  std::vector<connectors::SourceMessage> poll(std::size_t max_messages, std::chrono::milliseconds) override {
    if (!assigned_once_) {
      assigned_once_ = true;
      std::vector<connectors::TopicPartition> tps(partitions_.begin(), partitions_.end());
      if (listener_) listener_->on_assigned(tps);
    }
    std::vector<connectors::SourceMessage> out;
    for (auto it = queue_.begin(); it != queue_.end() && out.size() < max_messages;) {
      if (paused_.contains({it->topic, it->partition})) {
        ++it;
        continue;
      }
      out.push_back(*it);
      it = queue_.erase(it);
    }
    ++polls;
    return out;
  }
  void commit(const std::vector<connectors::PartitionOffset>& offsets, bool synchronous) override {
    for (const auto& po : offsets) committed[po.tp] = po.offset;
    if (synchronous) ++sync_commits;
  }
  void pause(const std::vector<connectors::TopicPartition>& tps) override {
    for (const auto& tp : tps) paused_.insert(tp);
    ++pause_calls;
  }
  void resume(const std::vector<connectors::TopicPartition>& tps) override {
    for (const auto& tp : tps) paused_.erase(tp);
  }
  std::vector<connectors::TopicPartition> assignment() const override {
    return {partitions_.begin(), partitions_.end()};
  }
  void close() override {
    if (listener_ && !closed) listener_->on_revoked(assignment());
    closed = true;
  }

  void add_partition(const std::string& topic, int partition) { partitions_.insert({topic, partition}); }
  void push(const std::string& topic, int partition, std::int64_t offset, std::string payload, std::int64_t ts = -1) {
    add_partition(topic, partition);
    connectors::SourceMessage m;
    m.topic = topic;
    m.partition = partition;
    m.offset = offset;
    m.timestamp_ms = ts;
    m.payload = std::move(payload);
    queue_.push_back(std::move(m));
  }
  std::size_t remaining() const { return queue_.size(); }
  bool is_paused(const connectors::TopicPartition& tp) const { return paused_.contains(tp); }

  std::map<connectors::TopicPartition, std::int64_t> committed;
  int sync_commits = 0;
  int pause_calls = 0;
  int polls = 0;
  bool closed = false;

 private:
  connectors::RebalanceListener* listener_ = nullptr;
  std::set<connectors::TopicPartition> partitions_;
  std::set<connectors::TopicPartition> paused_;
  std::deque<connectors::SourceMessage> queue_;
  bool assigned_once_ = false;
};

// A shared in-memory "table" that several FakeSinks write into.
struct FakeTable {
  std::mutex mutex;
  std::map<std::string, connectors::RowMutation> rows;  // key → last write
  std::size_t writes = 0;
  bool down = false;                  // every write throws a retriable error
  std::set<std::string> poison_rows;  // rows rejected for good
};

class FakeSink final : public connectors::RowSink {
 public:
  explicit FakeSink(FakeTable& table) : table_(table) {}
  std::vector<connectors::RejectedRow> write(const std::string&, std::span<const connectors::RowMutation> rows,
                                             const connectors::WriteOptions&) override {
    std::lock_guard lock(table_.mutex);
    if (table_.down) throw connectors::HBaseError("fake outage", "fake:1", "putMultiple", true);
    std::vector<connectors::RejectedRow> rejected;
    for (std::size_t i = 0; i < rows.size(); ++i) {
      if (table_.poison_rows.contains(rows[i].row)) {
        rejected.push_back({i, "fake: row rejected"});
        continue;
      }
      table_.rows[rows[i].row] = rows[i];
    }
    ++table_.writes;
    return rejected;
  }
  std::string endpoint() const override { return "fake:1"; }

 private:
  FakeTable& table_;
};

class FakeDeadLetters final : public connectors::DeadLetterSink {
 public:
  void send(const connectors::DeadLetter& letter, Done done) override {
    pending_.push_back({letter, std::move(done)});
  }
  void poll(std::chrono::milliseconds) override {
    if (hold) return;
    auto pending = std::exchange(pending_, {});
    for (auto& [letter, done] : pending) {
      if (fail_next > 0) {
        --fail_next;
        done(false, "fake: broker down");
        continue;
      }
      delivered.push_back(letter);
      done(true, "");
    }
  }
  bool flush(std::chrono::milliseconds timeout) override {
    poll(timeout);
    return pending_.empty();
  }

  std::vector<connectors::DeadLetter> delivered;
  bool hold = false;  // keep letters unacknowledged
  int fail_next = 0;

 private:
  std::vector<std::pair<connectors::DeadLetter, Done>> pending_;
};

}  // namespace hbingest::testing
