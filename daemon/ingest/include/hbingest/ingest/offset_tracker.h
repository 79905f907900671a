#pragma once
// Which offset may be committed per partition when events finish out of order.
//
// Every consumed offset is `track`ed; it is `complete`d once its event is stored in HBase, acked by
// the dead-letter topic, or deliberately skipped. The committable position of a partition is the
// lowest offset still pending (or one past the highest tracked offset when none is): committing it
// never skips an event that is not stored yet. Offsets must be tracked in increasing order per
// partition (Kafka delivers them so); a partition whose offsets go back (its log was truncated, its
// topic deleted and re-created, its offset reset, or a batch polled before a rebalance overlaps the
// re-read) starts a new era: the caller forgets it and tracks it afresh (see try_track()).
//
// Every time a partition's tracking starts (first track after its assignment or after forget())
// it gets a new generation, never reused. Whatever is in flight carries the generation it was
// tracked in, and a completion from another generation is ignored: offset 7 of the old log is not
// offset 7 of the new one, so an old write finishing late must not make a new offset committable.
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
#include <stdexcept>
#include <vector>

#include "hbingest/connectors/source.h"

namespace hbingest::ingest {

class OffsetTracker {
 public:
  // Identifies one era of a partition's tracking; 0 is never one (kNoGeneration: not tracked).
  using Generation = std::uint64_t;
  static constexpr Generation kNoGeneration = 0;

  // The calls made per event take a TopicPartitionRef: no topic string is copied to look one up.
  // Returns the generation `offset` is tracked in. Throws OffsetTrackerError for an offset not above
  // the last one tracked on `tp` (that is a new era: see try_track()).
  Generation track(connectors::TopicPartitionRef tp, std::int64_t offset, std::size_t bytes);
  // The same without the throw: nullopt (and nothing tracked) for an offset not above the last one.
  std::optional<Generation> try_track(connectors::TopicPartitionRef tp, std::int64_t offset, std::size_t bytes);
  // The highest offset tracked on `tp` in its current generation, if any.
  std::optional<std::int64_t> last_tracked(connectors::TopicPartitionRef tp) const;
  // The current generation of `tp`, or kNoGeneration when it is not tracked.
  Generation generation(connectors::TopicPartitionRef tp) const;
  // Re-states the bytes held by the offset tracked last on `tp` (the event grew into a row).
  void set_bytes_of_last(connectors::TopicPartitionRef tp, std::size_t bytes);
  // Ignored unless `generation` is the current one of `tp` (the partition was forgotten since).
  void complete(connectors::TopicPartitionRef tp, std::int64_t offset, Generation generation);

  // Next offset to commit for `tp` (Kafka semantics: first offset not yet done), if any offset
  // was tracked since the partition was assigned.
  std::optional<std::int64_t> committable(const connectors::TopicPartition& tp) const;
  // Committable positions the group coordinator has not acknowledged yet, except those sent less
  // than `resend_after` before `now` and still unanswered (an answer may never come: CommitListener).
  std::vector<connectors::PartitionOffset> uncommitted(std::chrono::steady_clock::time_point now,
                                                       std::chrono::steady_clock::duration resend_after) const;
  // Handed to an asynchronous commit at `now`; its answer is still to come.
  void mark_sent(const std::vector<connectors::PartitionOffset>& offsets, std::chrono::steady_clock::time_point now);
  // Acknowledged by the group coordinator. Only positions sent (mark_sent) in the current generation
  // count: an answer to a commit of an earlier one is ignored, however far the new one has read.
  // Synchronous commits are marked sent too. The position acknowledged last is the committed one,
  // even below an earlier answer: the coordinator stored it last (librdkafka re-sends commits by
  // itself behind newer ones), and the committable position is then sent again.
  void mark_committed(const std::vector<connectors::PartitionOffset>& offsets);
  // The commit failed: the positions are sent again at the next chance. A failed position below the
  // acknowledged one may still have been stored after it: that one is sent again too.
  void mark_commit_failed(const std::vector<connectors::PartitionOffset>& offsets);
  // The position the coordinator acknowledged last for `tp`, if any since the partition was assigned.
  std::optional<std::int64_t> committed(const connectors::TopicPartition& tp) const;

  std::size_t pending(const connectors::TopicPartition& tp) const;
  std::size_t pending_total() const { return pending_total_; }
  // Bytes held by pending offsets, all partitions.
  std::size_t pending_bytes() const { return pending_bytes_; }
  // Offsets kept for `tp` (pending ones and the completed ones behind the lowest pending).
  std::size_t window(const connectors::TopicPartition& tp) const;
  std::size_t window_total() const { return window_total_; }
  // Forgets a partition (revoked, assigned afresh, or a new era): its pending offsets will be
  // redelivered (to the next owner, or to this one), and completions of them are ignored from now on.
  void forget(const connectors::TopicPartition& tp);
  std::vector<connectors::TopicPartition> partitions() const;

 private:
  struct Entry {
    std::int64_t offset;
    std::size_t bytes;  // 0 once done
    bool done;
  };
  struct PartitionState {
    Generation generation = kNoGeneration;
    std::deque<Entry> window;           // tracked offsets not yet below the commit point, ascending
    std::int64_t next_after_last = -1;  // highest tracked offset + 1
    std::int64_t committed = -1;        // position acknowledged last
    std::int64_t sent = -1;             // position of the unanswered commit, if any
    std::int64_t highest_sent = -1;     // highest position sent in this generation (failed or not)
    std::chrono::steady_clock::time_point sent_at{};
    std::size_t pending = 0;
    std::size_t pending_bytes = 0;
  };
  void advance(PartitionState& state);

  std::map<connectors::TopicPartition, PartitionState, connectors::TopicPartitionLess> partitions_;
  std::size_t pending_total_ = 0;
  std::size_t pending_bytes_ = 0;
  std::size_t window_total_ = 0;
  Generation last_generation_ = kNoGeneration;
};

// The tracker was asked for something that contradicts what it tracks. The positions it holds may
// then be wrong: nothing may be committed from it any more (Pipeline::run).
class OffsetTrackerError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

}  // namespace hbingest::ingest
