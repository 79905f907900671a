#include "hbingest/ingest/offset_tracker.h"

#include <gtest/gtest.h>
#include <algorithm>
#include <chrono>
#include <random>

namespace hbingest::ingest {
namespace {

const connectors::TopicPartition kP0{"events", 0};
const connectors::TopicPartition kP1{"events", 1};
const auto kT0 = std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
constexpr std::chrono::seconds kResend{15};

TEST(OffsetTracker, NothingTrackedNothingCommittable) {
  OffsetTracker tracker;
  EXPECT_FALSE(tracker.committable(kP0));
  EXPECT_TRUE(tracker.uncommitted(kT0, kResend).empty());
}

TEST(OffsetTracker, CommitsOnlyBelowLowestPending) {
  OffsetTracker tracker;
  for (int o = 10; o < 15; ++o) tracker.track(kP0, o, 0);
  EXPECT_EQ(tracker.committable(kP0), 10);
  tracker.complete(kP0, 12, tracker.generation(kP0));
  tracker.complete(kP0, 13, tracker.generation(kP0));
  EXPECT_EQ(tracker.committable(kP0), 10) << "10 is not stored yet";
  tracker.complete(kP0, 10, tracker.generation(kP0));
  EXPECT_EQ(tracker.committable(kP0), 11);
  tracker.complete(kP0, 11, tracker.generation(kP0));
  EXPECT_EQ(tracker.committable(kP0), 14);
  tracker.complete(kP0, 14, tracker.generation(kP0));
  EXPECT_EQ(tracker.committable(kP0), 15);
  EXPECT_EQ(tracker.pending_total(), 0u);
}

TEST(OffsetTracker, GapsInOffsetsAreFine) {
  // Compacted topics and transactional markers leave holes in offsets.
  OffsetTracker tracker;
  tracker.track(kP0, 5, 0);
  tracker.track(kP0, 9, 0);
  tracker.complete(kP0, 5, tracker.generation(kP0));
  EXPECT_EQ(tracker.committable(kP0), 9);
  tracker.complete(kP0, 9, tracker.generation(kP0));
  EXPECT_EQ(tracker.committable(kP0), 10);
}

TEST(OffsetTracker, PartitionsAreIndependent) {
  OffsetTracker tracker;
  tracker.track(kP0, 0, 0);
  tracker.track(kP1, 100, 0);
  tracker.complete(kP1, 100, tracker.generation(kP1));
  EXPECT_EQ(tracker.committable(kP0), 0);
  EXPECT_EQ(tracker.committable(kP1), 101);
  EXPECT_EQ(tracker.pending(kP0), 1u);
  EXPECT_EQ(tracker.pending(kP1), 0u);
}

TEST(OffsetTracker, UncommittedReportsOnlyPositionsNotAcknowledged) {
  OffsetTracker tracker;
  tracker.track(kP0, 0, 0);
  tracker.complete(kP0, 0, tracker.generation(kP0));
  auto first = tracker.uncommitted(kT0, kResend);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].offset, 1);
  tracker.mark_sent(first, kT0);
  tracker.mark_committed(first);
  EXPECT_EQ(tracker.committed(kP0), 1);
  EXPECT_TRUE(tracker.uncommitted(kT0, kResend).empty());
  tracker.track(kP0, 1, 0);
  EXPECT_TRUE(tracker.uncommitted(kT0, kResend).empty()) << "1 is pending, position still 1";
  tracker.complete(kP0, 1, tracker.generation(kP0));
  ASSERT_EQ(tracker.uncommitted(kT0, kResend).size(), 1u);
}

// Tracks `offset` of events/0 and completes it at once: its event is stored.
void store(OffsetTracker& tracker, std::int64_t offset) {
  tracker.track(kP0, offset, 0);
  tracker.complete(kP0, offset, tracker.generation(kP0));
}

TEST(OffsetTracker, ASentCommitIsAwaitedThenSentAgainIfNeverAnswered) {
  OffsetTracker tracker;
  store(tracker, 0);
  tracker.mark_sent(tracker.uncommitted(kT0, kResend), kT0);
  EXPECT_FALSE(tracker.committed(kP0)) << "sent is not committed";
  EXPECT_TRUE(tracker.uncommitted(kT0 + kResend - std::chrono::milliseconds(1), kResend).empty())
      << "its answer is still due";
  const auto again = tracker.uncommitted(kT0 + kResend, kResend);
  ASSERT_EQ(again.size(), 1u) << "no answer in time: sent again";
  EXPECT_EQ(again[0].offset, 1);
}

TEST(OffsetTracker, AFailedCommitIsSentAgainAtOnce) {
  OffsetTracker tracker;
  store(tracker, 0);
  const auto sent = tracker.uncommitted(kT0, kResend);
  tracker.mark_sent(sent, kT0);
  tracker.mark_commit_failed(sent);
  EXPECT_EQ(tracker.uncommitted(kT0, kResend).size(), 1u);
}

TEST(OffsetTracker, AFailureOfAnOlderCommitKeepsAwaitingTheNewer) {
  OffsetTracker tracker;
  store(tracker, 0);
  const auto older = tracker.uncommitted(kT0, kResend);
  tracker.mark_sent(older, kT0);
  store(tracker, 1);
  const auto newer = tracker.uncommitted(kT0, kResend);
  ASSERT_EQ(newer.size(), 1u) << "the position moved past the one awaited";
  EXPECT_EQ(newer[0].offset, 2);
  tracker.mark_sent(newer, kT0);
  tracker.mark_commit_failed(older);
  EXPECT_TRUE(tracker.uncommitted(kT0, kResend).empty());
  tracker.mark_committed(newer);
  EXPECT_EQ(tracker.committed(kP0), 2);
}

TEST(OffsetTracker, AnOlderPositionAcknowledgedLastIsWhatTheCoordinatorHolds) {
  // librdkafka re-sends a commit by itself behind newer ones: the coordinator stores 1 over 2 and
  // answers both, 2 first. The position it holds is the one answered last, and 2 is sent again at
  // once, not after the wait for an unanswered commit.
  OffsetTracker tracker;
  store(tracker, 0);
  const auto older = tracker.uncommitted(kT0, kResend);
  tracker.mark_sent(older, kT0);
  store(tracker, 1);
  const auto newer = tracker.uncommitted(kT0, kResend);
  tracker.mark_sent(newer, kT0);
  tracker.mark_committed(newer);
  EXPECT_TRUE(tracker.uncommitted(kT0, kResend).empty());
  tracker.mark_committed(older);
  EXPECT_EQ(tracker.committed(kP0), 1);
  const auto again = tracker.uncommitted(kT0, kResend);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].offset, 2);
  tracker.mark_sent(again, kT0);
  EXPECT_TRUE(tracker.uncommitted(kT0, kResend).empty()) << "sent again: its answer is awaited";
  tracker.mark_committed(again);
  EXPECT_EQ(tracker.committed(kP0), 2);
}

TEST(OffsetTracker, AnOlderCommitFailingAfterANewerOneWasAcknowledgedSendsTheNewerAgain) {
  // A failed commit may have reached the coordinator before its answer was lost, and been stored
  // after the newer one: the newer position is sent again.
  OffsetTracker tracker;
  store(tracker, 0);
  const auto older = tracker.uncommitted(kT0, kResend);
  tracker.mark_sent(older, kT0);
  store(tracker, 1);
  const auto newer = tracker.uncommitted(kT0, kResend);
  tracker.mark_sent(newer, kT0);
  tracker.mark_committed(newer);
  tracker.mark_commit_failed(older);
  const auto again = tracker.uncommitted(kT0, kResend);
  ASSERT_EQ(again.size(), 1u);
  EXPECT_EQ(again[0].offset, 2);
}

TEST(OffsetTracker, RejectsOffsetsGoingBackwardsAndSaysWhereTheLastWas) {
  OffsetTracker tracker;
  EXPECT_FALSE(tracker.last_tracked(kP0));
  tracker.track(kP0, 10, 0);
  EXPECT_EQ(tracker.last_tracked(kP0), 10);
  EXPECT_THROW(tracker.track(kP0, 9, 0), OffsetTrackerError);
  EXPECT_THROW(tracker.track(kP0, 10, 0), OffsetTrackerError);
  EXPECT_FALSE(tracker.try_track(kP0, 9, 0));
  EXPECT_EQ(tracker.pending(kP0), 1u) << "nothing tracked";
  EXPECT_EQ(tracker.try_track(kP0, 11, 0), tracker.generation(kP0));
}

// Issue 22, defect 1: a topic deleted and re-created (or truncated) starts again at offset 0.
// The old era's writes still in flight finish later; offset 5 of the old log is not offset 5 of
// the new one, so their completions must not make a new offset committable.
TEST(OffsetTracker, ACompletionFromAnEarlierEraCompletesNothingInTheNext) {
  OffsetTracker tracker;
  OffsetTracker::Generation old_era = OffsetTracker::kNoGeneration;
  for (int o = 0; o < 10; ++o) old_era = tracker.track(kP0, o, 0);
  tracker.forget(kP0);  // the offsets went back: a new era
  const auto new_era = tracker.track(kP0, 5, 0);
  EXPECT_NE(new_era, old_era);
  EXPECT_EQ(tracker.generation(kP0), new_era);
  tracker.complete(kP0, 5, old_era);  // the old era's write of offset 5 finishes now
  EXPECT_EQ(tracker.pending(kP0), 1u);
  EXPECT_EQ(tracker.committable(kP0), 5) << "the new era's offset 5 is not stored";
  tracker.complete(kP0, 5, new_era);
  EXPECT_EQ(tracker.committable(kP0), 6);
}

TEST(OffsetTracker, GenerationsAreNeverReused) {
  OffsetTracker tracker;
  const auto first = tracker.track(kP0, 0, 0);
  tracker.forget(kP0);
  EXPECT_EQ(tracker.generation(kP0), OffsetTracker::kNoGeneration);
  const auto other = tracker.track(kP1, 0, 0);
  const auto second = tracker.track(kP0, 0, 0);
  EXPECT_NE(first, second);
  EXPECT_NE(other, second);
}

// Stores offsets 0..99 of kP0, sends the commit of 100 and forgets the partition (its offsets went
// back): returns the commit sent, whose answer is still to come.
std::vector<connectors::PartitionOffset> send_commit_of_an_era_then_forget_it(OffsetTracker& tracker) {
  for (int o = 0; o < 100; ++o) store(tracker, o);
  auto sent = tracker.uncommitted(kT0, kResend);
  tracker.mark_sent(sent, kT0);
  tracker.forget(kP0);
  return sent;
}
// An answer to a commit sent in the old era (position 100) that arrives after the new era began at
// 0 must not pass for the new era's committed position: the new era's positions below it would
// never be sent, and the coordinator would keep what came last.
TEST(OffsetTracker, AnAnswerToACommitOfAnEarlierEraIsIgnored) {
  OffsetTracker tracker;
  const auto old_position = send_commit_of_an_era_then_forget_it(tracker);
  ASSERT_EQ(old_position.size(), 1u);
  for (int o = 0; o < 10; ++o) store(tracker, o);
  tracker.mark_committed(old_position);
  EXPECT_FALSE(tracker.committed(kP0));
  const auto position = tracker.uncommitted(kT0, kResend);
  ASSERT_EQ(position.size(), 1u);
  EXPECT_EQ(position[0].offset, 10);
}

// The same when the new era has already read past the old position (the re-created topic holds more
// events than the old one had, or the answer is served by a poll after the new era's first batch):
// the old answer (100) is not above what the new era tracked, yet it is no answer to anything the
// new era sent. Taken, it suppressed the new era's commits of 50 until 100 was committable, and a
// crash meanwhile left the coordinator at 100: events 50..99 of the new era lost.
TEST(OffsetTracker, AnAnswerToACommitOfAnEarlierEraIsIgnoredOnceTheNewEraReadPastIt) {
  OffsetTracker tracker;
  const auto old_position = send_commit_of_an_era_then_forget_it(tracker);
  ASSERT_EQ(old_position.size(), 1u);
  for (int o = 0; o < 50; ++o) store(tracker, o);
  for (int o = 50; o < 150; ++o) tracker.track(kP0, o, 0);  // not stored yet
  tracker.mark_committed(old_position);
  EXPECT_FALSE(tracker.committed(kP0));
  const auto position = tracker.uncommitted(kT0, kResend);
  ASSERT_EQ(position.size(), 1u);
  EXPECT_EQ(position[0].offset, 50);
}

TEST(OffsetTracker, ForgetDropsPendingAndLateCompletionsAreIgnored) {
  OffsetTracker tracker;
  tracker.track(kP0, 1, 0);
  tracker.track(kP0, 2, 0);
  tracker.forget(kP0);
  EXPECT_EQ(tracker.pending_total(), 0u);
  tracker.complete(kP0, 1, tracker.generation(kP0));
  EXPECT_FALSE(tracker.committable(kP0));
}

TEST(OffsetTracker, RandomCompletionOrderNeverCommitsPastAPendingOffset) {
  std::mt19937 rng(42);
  for (int round = 0; round < 50; ++round) {
    OffsetTracker tracker;
    std::vector<std::int64_t> offsets;
    for (std::int64_t o = 0; o < 200; ++o) {
      tracker.track(kP0, o, 0);
      offsets.push_back(o);
    }
    std::shuffle(offsets.begin(), offsets.end(), rng);
    std::vector<bool> done(200, false);
    for (auto o : offsets) {
      tracker.complete(kP0, o, tracker.generation(kP0));
      done[static_cast<std::size_t>(o)] = true;
      const auto position = *tracker.committable(kP0);
      for (std::int64_t below = 0; below < position; ++below) {
        ASSERT_TRUE(done[static_cast<std::size_t>(below)]);
      }
      if (position < 200) {
        ASSERT_FALSE(done[static_cast<std::size_t>(position)]);
      }
    }
    EXPECT_EQ(tracker.committable(kP0), 200);
  }
}

TEST(OffsetTrackerBytes, PendingBytesFollowTrackRestateCompleteAndForget) {
  OffsetTracker tracker;
  tracker.track(kP0, 0, 100);
  tracker.set_bytes_of_last(kP0, 700);  // grew into a row
  tracker.track(kP0, 1, 50);
  tracker.track(kP1, 9, 30);
  EXPECT_EQ(tracker.pending_bytes(), 780u);
  tracker.complete(kP0, 0, tracker.generation(kP0));
  EXPECT_EQ(tracker.pending_bytes(), 80u);
  tracker.complete(kP0, 0, tracker.generation(kP0));  // twice: no double subtraction
  EXPECT_EQ(tracker.pending_bytes(), 80u);
  tracker.forget(kP1);
  EXPECT_EQ(tracker.pending_bytes(), 50u);
  tracker.complete(kP0, 1, tracker.generation(kP0));
  EXPECT_EQ(tracker.pending_bytes(), 0u);
}

TEST(OffsetTrackerBytes, TheWindowKeepsCompletedOffsetsBehindAStuckOne) {
  OffsetTracker tracker;
  for (int o = 0; o < 10; ++o) tracker.track(kP0, o, 1);
  for (int o = 1; o < 10; ++o) tracker.complete(kP0, o, tracker.generation(kP0));
  EXPECT_EQ(tracker.pending(kP0), 1u);
  EXPECT_EQ(tracker.window(kP0), 10u) << "offset 0 is stuck: 1..9 are kept behind it";
  EXPECT_EQ(tracker.window_total(), 10u);
  tracker.complete(kP0, 0, tracker.generation(kP0));
  EXPECT_EQ(tracker.window(kP0), 1u) << "only the commit point is left";
  EXPECT_EQ(tracker.window_total(), 1u);
  tracker.forget(kP0);
  EXPECT_EQ(tracker.window_total(), 0u);
}

}  // namespace
}  // namespace hbingest::ingest
