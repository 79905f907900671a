#pragma once
// Which offset may be committed per partition when events finish out of order.
//
// Every consumed offset is `track`ed; it is `complete`d once its event is stored in HBase, acked by
// the dead-letter topic, or deliberately skipped. The committable position of a partition is the
// lowest offset still pending (or one past the highest tracked offset when none is): committing it
// never skips an event that is not stored yet. Offsets must be tracked in increasing order per
// partition (Kafka delivers them so).
//
// Each tracked offset also carries the bytes its event holds while in flight (held_bytes.h), so
// that flow control bounds memory by what is really held. The window of a partition keeps every
// offset from the lowest pending one up: one stuck event keeps all later completed ones, which is
// why flow control limits window sizes, not just pending counts.
//
// Not thread-safe: owned by the pipeline thread; writers report completions through a queue.

#include <chrono>
#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <vector>

#include "hbingest/connectors/source.h"

namespace hbingest::ingest {

class OffsetTracker {
 public:
  // The calls made per event take a TopicPartitionRef: no topic string is copied to look one up.
  void track(connectors::TopicPartitionRef tp, std::int64_t offset, std::size_t bytes);
  // Re-states the bytes held by the offset tracked last on `tp` (the event grew into a row).
  void set_bytes_of_last(connectors::TopicPartitionRef tp, std::size_t bytes);
  void complete(connectors::TopicPartitionRef tp, std::int64_t offset);

  // Next offset to commit for `tp` (Kafka semantics: first offset not yet done), if any offset
  // was tracked since the partition was assigned.
  std::optional<std::int64_t> committable(const connectors::TopicPartition& tp) const;
  // Committable positions the group coordinator has not acknowledged yet, except those sent less
  // than `resend_after` before `now` and still unanswered (an answer may never come: CommitListener).
  std::vector<connectors::PartitionOffset> uncommitted(std::chrono::steady_clock::time_point now,
                                                       std::chrono::steady_clock::duration resend_after) const;
  // Handed to an asynchronous commit at `now`; its answer is still to come.
  void mark_sent(const std::vector<connectors::PartitionOffset>& offsets, std::chrono::steady_clock::time_point now);
  // Acknowledged by the group coordinator.
  void mark_committed(const std::vector<connectors::PartitionOffset>& offsets);
  // The commit failed: the positions are sent again at the next chance.
  void mark_commit_failed(const std::vector<connectors::PartitionOffset>& offsets);
  // The highest acknowledged position of `tp`, if any since the partition was assigned.
  std::optional<std::int64_t> committed(const connectors::TopicPartition& tp) const;

  std::size_t pending(const connectors::TopicPartition& tp) const;
  std::size_t pending_total() const { return pending_total_; }
  // Bytes held by pending offsets, all partitions.
  std::size_t pending_bytes() const { return pending_bytes_; }
  // Offsets kept for `tp` (pending ones and the completed ones behind the lowest pending).
  std::size_t window(const connectors::TopicPartition& tp) const;
  std::size_t window_total() const { return window_total_; }
  // Forgets a partition (revoked): its pending offsets will be redelivered to the next owner.
  void forget(const connectors::TopicPartition& tp);
  std::vector<connectors::TopicPartition> partitions() const;

 private:
  struct Entry {
    std::int64_t offset;
    std::size_t bytes;  // 0 once done
    bool done;
  };
  struct PartitionState {
    std::deque<Entry> window;           // tracked offsets not yet below the commit point, ascending
    std::int64_t next_after_last = -1;  // highest tracked offset + 1
    std::int64_t committed = -1;        // highest acknowledged position
    std::int64_t sent = -1;             // position of the unanswered commit, if any
    std::chrono::steady_clock::time_point sent_at{};
    std::size_t pending = 0;
    std::size_t pending_bytes = 0;
  };
  void advance(PartitionState& state);

  std::map<connectors::TopicPartition, PartitionState, connectors::TopicPartitionLess> partitions_;
  std::size_t pending_total_ = 0;
  std::size_t pending_bytes_ = 0;
  std::size_t window_total_ = 0;
};

}  // namespace hbingest::ingest
