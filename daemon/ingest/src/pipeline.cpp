#include "hbingest/ingest/pipeline.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <limits>

#include "hbingest/ingest/backoff.h"
#include "hbingest/ingest/depth_controller.h"
#include "hbingest/ingest/held_bytes.h"

namespace hbingest::ingest {

namespace {

using Clock = std::chrono::steady_clock;
using connectors::TopicPartition;

// Resume a paused partition only once it is well below its limit, so it does not flap.
constexpr double kResumeFraction = 0.8;
// How long the loop holds at an in-flight limit, taking no message while the writers drain, before
// it pauses partitions. A pause costs a refetch: librdkafka purges what it has prefetched for a
// paused partition and fetches it again after the resume (librdkafka #2052, #5343), and at full
// speed the writers then ran dry before messages came again; pausing at every brush with the limit
// kept them busy 60 % of a run (bench/README.md, "The gap to the ceiling"). Holding does not
// poll, which serves rebalances, so it ends soon: a limit still reached after it means the writers
// are stuck, and then pausing (and polling for rebalances) is right. While the loop holds,
// librdkafka's prefetch stays within queued.max.messages.kbytes.
constexpr std::chrono::milliseconds kHoldBeforePause{1000};
// How long one turn of the loop waits for a completion while it holds.
constexpr std::chrono::milliseconds kHoldWait{20};
// The hbingest_events_invalid_total reason of a record read from the dead-letter topic (reject()).
constexpr const char* kFromDeadLetterTopic = "from_dead_letter_topic";
// Poll at least this often even with nothing to do: librdkafka serves rebalances and heartbeats
// from poll, and the watchdog needs the loop to turn.
constexpr std::chrono::milliseconds kMaxPollWait{100};

std::string describe(const connectors::SourceMessage& m) {
  return m.topic + "/" + std::to_string(m.partition) + "@" + std::to_string(m.offset);
}

std::string exception_class_for(const std::string& stage, const std::string& reason) {
  return "hbingest." + stage + "." + reason;
}

// a + b clamped to the int64 range instead of overflowing (std::add_sat is C++26): a Kafka
// timestamp may be anything up to INT64_MAX, and time + TTL must not wrap around to "expired".
std::int64_t add_sat(std::int64_t a, std::int64_t b) {
  std::int64_t sum = 0;
  if (!__builtin_add_overflow(a, b, &sum)) return sum;
  return b > 0 ? std::numeric_limits<std::int64_t>::max() : std::numeric_limits<std::int64_t>::min();
}

}  // namespace

Pipeline::Pipeline(PipelineOptions options, connectors::Source& source, connectors::DeadLetterSink& dead_letters,
                   WriterPool& writers, const routing::RouteSet& routes, PipelineObserver& observer, NowMs now_ms)
    : options_(std::move(options)),
      source_(source),
      dead_letters_(dead_letters),
      writers_(writers),
      routes_(routes),
      observer_(observer),
      now_ms_(std::move(now_ms)),
      decoder_(options_.decode, options_.schema_registry.get(), options_.schema_cache, options_.decoder),
      batcher_(options_.batch) {
  source_.set_rebalance_listener(this);
  source_.set_commit_listener(this);
}

// The source may outlive the pipeline (run_command destroys the pipeline first) and closes itself
// on destruction: it must not call a listener that is gone.
Pipeline::~Pipeline() {
  source_.set_commit_listener(nullptr);
  source_.set_rebalance_listener(nullptr);
}

void Pipeline::run(const std::atomic<bool>& stop) {
  try {
    consume(stop);
    shutdown_.start();
    drain();
  } catch (const OffsetTrackerError& e) {
    spdlog::error("stopping without committing anything: the offset tracker is inconsistent: {}", e.what());
    shutdown_.start();
    leave_after_failure(/*commit_stored=*/false);
    throw;
  } catch (...) {
    shutdown_.start();
    leave_after_failure(/*commit_stored=*/true);
    throw;
  }
  // Still registered: close() revokes the assignment through on_revoked, which commits it.
  source_.close(shutdown_.left_for(ShutdownStep::leave, options_.close_timeout));
}

void Pipeline::consume(const std::atomic<bool>& stop) {
  next_commit_ = Clock::now() + options_.commit_interval;
  while (!stop.load()) {
    stats_.last_loop_ns = Clock::now().time_since_epoch().count();
    drain_completions();
    dead_letters_.poll(std::chrono::milliseconds(0));
    resend_due_dead_letters();
    retry_schema_holds();
    const bool holding = update_flow_control();

    auto wait = holding ? kHoldWait : kMaxPollWait;
    if (const auto deadline = batcher_.next_deadline()) {
      const auto until = std::chrono::duration_cast<std::chrono::milliseconds>(*deadline - Clock::now());
      wait = std::clamp(until, std::chrono::milliseconds(0), wait);
    }
    if (holding) {
      writers_.wait_for_completion(wait);
    } else {
      auto messages = source_.poll(options_.poll_batch, wait);
      // librdkafka serves a rebalance wherever it falls while poll() collects a batch, so the batch
      // may hold messages of partitions revoked (or lost) since. They belong to the next owner, who
      // re-reads them from the committed offset; handled here they would be tracked (and committed
      // at the stop) for a partition this member no longer owns.
      const auto not_owned = std::erase_if(messages, [this](const connectors::SourceMessage& m) {
        return !assigned_.contains(connectors::TopicPartitionRef{m.topic, m.partition});
      });
      if (not_owned > 0) spdlog::info("dropped {} polled message(s) of partitions revoked meanwhile", not_owned);
      if (!messages.empty() && options_.startup_timeline != nullptr) options_.startup_timeline->first_message();
      report_positions(messages);
      for (auto& message : messages) handle(std::move(message));
    }
    submit(batcher_.expired(Clock::now()));

    if (Clock::now() >= next_commit_) {
      observer_.on_schema_cache(decoder_.schema_cache_stats());
      commit(false);
      next_commit_ = Clock::now() + options_.commit_interval;
    }
  }
}

void Pipeline::report_positions(const std::vector<connectors::SourceMessage>& messages) {
  // Kafka hands out a partition's messages in order: its last one in the batch is where it stands
  // (also when its offsets went back). A batch holds a few partitions: a linear search is enough.
  std::vector<const connectors::SourceMessage*> last;
  for (const auto& m : messages) {
    const auto it = std::find_if(last.begin(), last.end(), [&](const connectors::SourceMessage* l) {
      return l->partition == m.partition && l->topic == m.topic;
    });
    if (it == last.end()) {
      last.push_back(&m);
    } else {
      *it = &m;
    }
  }
  for (const auto* m : last) observer_.on_consumed_position(m->topic, m->partition, m->offset + 1);
}

void Pipeline::drain() {
  const auto deadline = shutdown_.end_of(ShutdownStep::drain);
  spdlog::info("stopping: flushing {} open rows and {} in flight (shutdown_deadline {} ms)", batcher_.open_rows(),
               tracker_.pending_total(), options_.shutdown_deadline.count());
  submit(batcher_.flush_all());
  const bool drained = drain_until([&] { return tracker_.pending_total() == 0; }, deadline);
  if (!drained) {
    spdlog::warn("shutdown deadline passed with {} events not stored; their offsets stay uncommitted",
                 tracker_.pending_total());
  }
  commit(true);
}

void Pipeline::leave_after_failure(bool commit_stored) noexcept {
  // No flush and no wait: whatever failed may fail again (an invalid event in a batch, the
  // coordinator), and the process is on its way out. The tracker's positions stop at the first
  // event not stored, so this commit never passes the failing event; events still in flight are
  // re-read and rewritten as identical cells after the restart.
  try {
    if (commit_stored) {
      const auto owned = source_.assignment();
      commit(true, &owned);
    }
  } catch (const std::exception& e) {
    spdlog::error("stopping after an error: committing the stored offsets failed: {}", e.what());
  } catch (...) {
    spdlog::error("stopping after an error: committing the stored offsets failed");
  }
  // Unregistered first, so close() does not revoke through on_revoked, which flushes and waits.
  source_.set_rebalance_listener(nullptr);
  try {
    source_.close(shutdown_.left_for(ShutdownStep::leave, options_.close_timeout));
  } catch (const std::exception& e) {
    spdlog::error("stopping after an error: leaving the consumer group failed: {}", e.what());
  } catch (...) {
    spdlog::error("stopping after an error: leaving the consumer group failed");
  }
}

void Pipeline::handle(connectors::SourceMessage&& message) {
  // A partition waiting for a schema keeps its order: what follows the waiting message waits too.
  if (const auto held = schema_holds_.find(connectors::TopicPartitionRef{message.topic, message.partition});
      held != schema_holds_.end()) {
    held->second.messages.push_back(std::move(message));
    return;
  }
  if (!process(message)) hold_for_schema(std::move(message));
}

bool Pipeline::process(connectors::SourceMessage& message) {
  // Decoded before it is tracked: a message whose schema the registry cannot give now is not
  // tracked at all, so the partition's commits stop below it while it waits (hold_for_schema).
  header_views_.clear();
  for (const auto& header : message.headers) header_views_.push_back({header.name, header.value});
  const event_formats::MessageView view{.topic = message.topic,
                                        .payload = message.payload,
                                        .timestamp_ms = message.timestamp_ms,
                                        .partition = message.partition,
                                        .offset = message.offset,
                                        .key = message.key,
                                        .headers = header_views_};
  auto decoded = decoder_.decode(view, event_);
  // A tombstone that deletes reads its key now, as a value is read: the key's schema may have to
  // be waited for too.
  const routing::Route* deleting = nullptr;
  if (!message.payload) {
    for (const routing::Route* route : routes_.routes_of_topic(message.topic)) {
      if (route->on_tombstone == config::OnTombstone::delete_row) {
        deleting = route;
        break;
      }
    }
    if (deleting != nullptr) decoded = decoder_.decode_key_only(view, event_);
  }
  if (decoded && decoded->kind == event_formats::DecodeFailure::Kind::unavailable) {
    schema_wait_ = std::move(*decoded);
    return false;
  }
  // Views message.topic: used only while the message is still here (not after it is moved on).
  const connectors::TopicPartitionRef tp{message.topic, message.partition};
  // One tracker lookup per event; a second only when the offsets went back.
  auto tracked = tracker_.try_track(tp, message.offset, held_bytes(message));
  if (!tracked) {
    start_new_era(message, tracker_.last_tracked(tp).value_or(-1));
    tracked = tracker_.track(tp, message.offset, held_bytes(message));
  }
  const auto generation = *tracked;
  ++stats_.consumed;

  if (!message.payload) {
    process_tombstone(message, generation, deleting, std::move(decoded));
    return true;
  }
  if (decoded) {
    observer_.on_consumed(message.topic, "", message.payload_bytes().size());
    auto failure = std::move(*decoded);
    reject(std::move(message), generation, "decode", failure.reason, failure.message, true, failure.schema_id);
    return true;
  }
  observer_.on_consumed(message.topic, event_.event_type, message.payload_bytes().size());

  const routing::Route* route = routes_.find(message.topic, event_.event_type);
  if (route == nullptr) {
    switch (options_.unknown_type) {
      case config::UnknownType::default_route:
        route = routes_.default_route();
        break;
      case config::UnknownType::skip:
        observer_.on_invalid("unknown_type");
        ++stats_.skipped;
        complete(tp, message.offset, generation);
        return true;
      case config::UnknownType::dlq:
        break;
    }
    if (route == nullptr) {
      reject(std::move(message), generation, "route", "unknown_type",
             "no route for event type '" + event_.event_type + "' from topic '" + message.topic + "'");
      return true;
    }
  }

  const auto time = cell_time(message, generation);
  if (!time) return true;
  const std::int64_t cell_ms = time->cell_ms;
  const std::int64_t ttl = time->ttl;
  const auto steady_reading = time->steady_reading;

  const keyspec::KafkaMeta meta{message.topic, message.partition, message.offset, message.timestamp_ms};
  if (auto error = route->key->encode(decoder_.fields(), meta, key_)) {
    reject(std::move(message), generation, "key", "bad_key", error->message());
    return true;
  }
  const auto table = table_of(*route, message.topic);
  if (!table) {
    reject(std::move(message), generation, "route", "table_not_allowed", table_problem_);
    return true;
  }
  if (auto error = route->columns.apply({decoder_.record(), &decoder_.fields(), message.payload_bytes()}, row_cells_)) {
    reject(std::move(message), generation, "decode", error->reason, error->message);
    return true;
  }

  connectors::RowMutation row;
  row.row = key_;
  row.cells = std::move(row_cells_.cells);  // apply() clears and refills it for the next event
  row.deleted_columns = std::move(row_cells_.deleted);
  if (!row.deleted_columns.empty()) stamped_a_delete(cell_ms);
  row.timestamp_ms = cell_ms;
  row.ttl_ms = ttl;
  // The event is now the message (kept for a possible dead letter) plus its row.
  tracker_.set_bytes_of_last(tp, held_bytes(message) + held_bytes(row));
  const int bucket = route->key->lead_bucket(key_).value_or(-1);
  observer_.on_row_queued(bucket, event_.time_ms);
  submit(batcher_.add(*table, std::move(row), RowOrigin{std::move(message), generation}, steady_reading));
  return true;
}

void Pipeline::process_tombstone(connectors::SourceMessage& message, OffsetTracker::Generation generation,
                                 const routing::Route* deleting, std::optional<event_formats::DecodeFailure> decoded) {
  observer_.on_consumed(message.topic, "", 0);
  const connectors::TopicPartitionRef tp{message.topic, message.partition};
  if (deleting == nullptr) {
    // The routes of a topic agree on what its tombstones do (build_routes checks it).
    const auto& routes = routes_.routes_of_topic(message.topic);
    const auto action = routes.empty() ? options_.decode.on_tombstone : routes.front()->on_tombstone;
    if (action == config::OnTombstone::skip) {
      observer_.on_invalid("tombstone");
      ++stats_.skipped;
      complete(tp, message.offset, generation);
      return;
    }
    const std::string why = action == config::OnTombstone::delete_row
                                ? "no route taking topic '" + message.topic + "' deletes (on_tombstone: delete)"
                                : "on_tombstone is dlq";
    reject(std::move(message), generation, "decode", "tombstone", "a tombstone (null value): " + why);
    return;
  }
  if (decoded) {
    auto failure = std::move(*decoded);
    reject(std::move(message), generation, "decode", failure.reason, failure.message, true, failure.schema_id);
    return;
  }
  const auto time = cell_time(message, generation);
  if (!time) return;
  const keyspec::KafkaMeta meta{message.topic, message.partition, message.offset, message.timestamp_ms};
  if (auto error = deleting->key->encode(decoder_.fields(), meta, key_)) {
    reject(std::move(message), generation, "key", "bad_key", "tombstone: " + error->message());
    return;
  }
  const auto table = table_of(*deleting, message.topic);
  if (!table) {
    reject(std::move(message), generation, "route", "table_not_allowed", table_problem_);
    return;
  }
  // Every cell of the row up to the tombstone's time goes, stamped by the same clock as the puts
  // (cell_time): an earlier event's put never survives it, a later event's is never masked.
  connectors::RowMutation row;
  row.row = key_;
  row.timestamp_ms = time->cell_ms;
  row.kind = connectors::MutationKind::delete_row;
  stamped_a_delete(time->cell_ms);
  tracker_.set_bytes_of_last(tp, held_bytes(message) + held_bytes(row));
  observer_.on_row_queued(deleting->key->lead_bucket(key_).value_or(-1), event_.time_ms);
  submit(batcher_.add(*table, std::move(row), RowOrigin{std::move(message), generation}, time->steady_reading));
}

void Pipeline::stamped_a_delete(std::int64_t cell_ms) {
  // HBase's delete marker at t masks every put at t, whichever came first: under ingest_time, a put
  // read after a delete in the same millisecond is stamped after it.
  if (options_.decode.cell_timestamp == config::CellTimestamp::ingest_time) {
    ingest_floor_ms_ = std::max(ingest_floor_ms_, add_sat(cell_ms, 1));
  }
}

std::optional<Pipeline::CellTime> Pipeline::cell_time(connectors::SourceMessage& message,
                                                      OffsetTracker::Generation generation) {
  const connectors::TopicPartitionRef tp{message.topic, message.partition};
  // HBase expires a cell once its timestamp + TTL is behind the region server's clock, which we
  // cannot read; ours is the wall clock (now_ms_), and it may be stepped. Skipping an expired event
  // only saves HBase a compaction, and a future event goes to the DLQ, so neither decision trusts
  // a step the steady clock did not see: `steady_now` is the wall clock at the first event plus
  // the steady time elapsed since (CLOCK_MONOTONIC follows NTP's slewing, not its steps). Expiry
  // compares with the earlier of the two readings, the future bound with the later. After a step
  // forward, events are therefore skipped no earlier than before it (rows HBase considers expired
  // are written and dropped by HBase); after a step back, no current event is dead-lettered. A
  // clock that is already wrong when the first event arrives is believed; a suspend (which the
  // steady clock does not count) errs the harmless way: fewer skips. ingest_time still
  // stamps cells with the wall clock: that is what the option asks for.
  const std::int64_t wall_now = now_ms_();
  // One steady reading per event serves the anchor, the elapsed time and the batcher's linger
  // below: clock reads were 3 % of the daemon's CPU in perf at three per event.
  const auto steady_reading = Clock::now();
  if (!clock_anchor_) clock_anchor_.emplace(wall_now, steady_reading);
  const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(steady_reading - clock_anchor_->second);
  const std::int64_t steady_now = add_sat(clock_anchor_->first, elapsed.count());
  const std::int64_t cell_ms = options_.decode.cell_timestamp == config::CellTimestamp::event_time
                                   ? event_.time_ms
                                   : std::max(wall_now, ingest_floor_ms_);

  // A cell stamped in the future outlives the TTL by as much (year 9999: forever). It is data, not
  // noise: it goes where invalid events go.
  const std::int64_t future_bound = add_sat(std::max(wall_now, steady_now), options_.decode.max_future_skew.count());
  if (cell_ms > future_bound) {
    const std::string detail = "cell timestamp " + std::to_string(cell_ms) +
                               " ms is more than decode.max_future_skew (" +
                               std::to_string(options_.decode.max_future_skew.count()) + " ms) ahead of now (" +
                               std::to_string(std::max(wall_now, steady_now)) + " ms)";
    reject(std::move(message), generation, "decode", "future_time", detail);
    return std::nullopt;
  }

  const std::int64_t family_ttl = options_.family_ttl.count();
  const std::int64_t ttl = event_.ttl_ms ? std::min(*event_.ttl_ms, family_ttl) : family_ttl;
  if (add_sat(cell_ms, ttl) <= std::min(wall_now, steady_now)) {
    // HBase would expire it at once; writing it only costs a compaction later.
    observer_.on_expired();
    ++stats_.skipped;
    complete(tp, message.offset, generation);
    return std::nullopt;
  }
  return CellTime{cell_ms, ttl, steady_reading};
}

const std::string* Pipeline::table_of(const routing::Route& route, std::string_view topic) {
  // A plain name, or a template's table kept in route_tables_: no string copied per event.
  if (!route.table.is_template()) return &route.table.name();
  auto resolved = route.table.resolve({topic, event_.event_type, &decoder_.fields()});
  if (!resolved.reason.empty()) {
    table_problem_ = std::move(resolved.reason);
    return nullptr;
  }
  auto& tables = route_tables_[&route];
  if (const auto it = tables.find(resolved.table); it != tables.end()) return &*it;
  if (tables.size() >= route.max_tables) {
    table_problem_ = "route " + route.name + " made its max_tables (" + std::to_string(route.max_tables) +
                     ") tables already; '" + resolved.table + "' would be one more";
    return nullptr;
  }
  const auto& table = *tables.insert(std::move(resolved.table)).first;
  if (options_.on_new_table) options_.on_new_table(table, route);
  return &table;
}

void Pipeline::hold_for_schema(connectors::SourceMessage&& message) {
  TopicPartition tp{message.topic, message.partition};
  const auto where = describe(message);
  auto& hold = schema_holds_[tp];
  const auto now = Clock::now();
  hold.since = now;
  hold.next_try = now + hold.backoff.next();
  hold.messages.push_back(std::move(message));
  // Paused here unless flow control has paused it already; either way it stays paused until its
  // messages went through (retry_schema_holds) and flow control lets it go.
  if (!paused_.contains(tp)) source_.pause({tp});
  const std::string id = schema_wait_.schema_id ? std::to_string(*schema_wait_.schema_id) : "?";
  schema_log_.log(spdlog::level::warn, "schema-wait:" + id,
                  "holding " + where + " and what follows it: " + schema_wait_.message +
                      "; nothing of the partition from there is committed or dead-lettered, it resumes by itself "
                      "when the registry answers");
  report_schema_holds();
}

void Pipeline::retry_schema_holds() {
  if (schema_holds_.empty()) return;
  const auto now = Clock::now();
  for (auto it = schema_holds_.begin(); it != schema_holds_.end();) {
    auto& hold = it->second;
    if (now < hold.next_try) {
      ++it;
      continue;
    }
    while (!hold.messages.empty() && process(hold.messages.front())) hold.messages.pop_front();
    if (!hold.messages.empty()) {
      hold.next_try = Clock::now() + hold.backoff.next();
      ++it;
      continue;
    }
    const TopicPartition tp = it->first;
    spdlog::info("schema registry answered: {}/{} resumes after {} s", tp.topic, tp.partition,
                 std::chrono::duration_cast<std::chrono::seconds>(now - hold.since).count());
    it = schema_holds_.erase(it);
    if (!paused_.contains(tp)) source_.resume({tp});
  }
  report_schema_holds();
}

void Pipeline::report_schema_holds() {
  stats_.partitions_waiting_for_schema = schema_holds_.size();
  std::optional<Clock::time_point> oldest;
  for (const auto& [tp, hold] : schema_holds_) {
    if (!oldest || hold.since < *oldest) oldest = hold.since;
  }
  stats_.schema_wait_since_ns = oldest ? oldest->time_since_epoch().count() : 0;
  if (oldest) stats_.schema_wait_reason.set(schema_wait_.message);
  observer_.on_partitions_waiting_for_schema(schema_holds_.size());
  observer_.on_schema_cache(decoder_.schema_cache_stats());
}

void Pipeline::start_new_era(const connectors::SourceMessage& message, std::int64_t last) {
  const TopicPartition tp{message.topic, message.partition};
  era_log_.log(spdlog::level::warn, "era:" + message.topic + "/" + std::to_string(message.partition),
               "offsets of " + message.topic + "/" + std::to_string(message.partition) + " went back from " +
                   std::to_string(last) + " to " + std::to_string(message.offset) +
                   " (log truncated, topic deleted and re-created, offset reset, or a re-read after a rebalance): "
                   "tracking it afresh from there; no position of what came before is committed, and its " +
                   std::to_string(tracker_.pending(tp)) + " event(s) still in flight complete nothing");
  // As on assignment: the events of the earlier era still in flight are written or dead-lettered
  // (their generation no longer completes anything), failed dead letters waiting for a retry go.
  tracker_.forget(tp);
  drop_dead_letter_retries({tp});
}

void Pipeline::reject(connectors::SourceMessage&& message, OffsetTracker::Generation generation,
                      const std::string& stage, const std::string& reason, const std::string& detail, bool skippable,
                      std::optional<std::int32_t> schema_id) {
  const connectors::TopicPartitionRef tp{message.topic, message.partition};
  if (!options_.dead_letter_topic.empty() && message.topic == options_.dead_letter_topic) {
    // Read from the dead-letter topic itself (a subscription that matches it; check-config refuses
    // that, this guards whatever slips past): sent there again it would be read again, and one bad
    // event would make letters forever. It is a letter already and stays in that topic, so skipping
    // it loses nothing; `fail` would stop every restart at it. Counted under its own reason.
    observer_.on_invalid(kFromDeadLetterTopic);
    rejections_log_.log(spdlog::level::warn, kFromDeadLetterTopic,
                        "not dead-lettering " + describe(message) + " (" + stage + "." + reason +
                            "): it was read from the dead-letter topic " + options_.dead_letter_topic +
                            " itself; skipped (no subscription should include dlq.topic)");
    ++stats_.skipped;
    complete(tp, message.offset, generation);
    return;
  }
  observer_.on_invalid(reason);
  // A row HBase refused for good was a valid event: skipping it would lose it silently. Under
  // `skip` it goes to the dead-letter topic (with HBase's reason); `fail` still stops.
  const config::OnInvalid mode =
      !skippable && options_.on_invalid == config::OnInvalid::skip ? config::OnInvalid::dlq : options_.on_invalid;
  switch (mode) {
    case config::OnInvalid::skip:
      spdlog::debug("skipping invalid event {}: {}", describe(message), detail);
      ++stats_.skipped;
      complete(tp, message.offset, generation);
      return;
    case config::OnInvalid::fail:
      throw InvalidEventStop("invalid event at " + describe(message) + " (" + stage + "): " + detail +
                             "; stopping because dlq.on_invalid is 'fail'");
    case config::OnInvalid::dlq:
      break;
  }
  // Every letter carries its origin in its headers and is counted; the log shows one per reason
  // and interval, with the number of repeats it stood for.
  rejections_log_.log(spdlog::level::info, stage + "." + reason,
                      "dead-lettering " + describe(message) + " (" + stage + "): " + detail);
  send_dead_letter({std::make_shared<connectors::DeadLetter>(connectors::DeadLetter{
                        std::move(message), stage, exception_class_for(stage, reason), detail, false, schema_id}),
                    generation});
}

void Pipeline::send_dead_letter(DeadLetterAttempt attempt) {
  auto letter = attempt.letter;
  dead_letters_.send(std::move(letter), [this, attempt = std::move(attempt)](connectors::DeadLetterOutcome outcome,
                                                                             const std::string& error) {
    on_dead_letter_done(attempt, outcome, error);
  });
}

void Pipeline::on_dead_letter_done(DeadLetterAttempt attempt, connectors::DeadLetterOutcome outcome,
                                   const std::string& error) {
  observer_.on_dead_letter(outcome);
  const auto& original = attempt.letter->original;
  const connectors::TopicPartitionRef tp{original.topic, original.partition};
  const bool delivered = outcome == connectors::DeadLetterOutcome::delivered;
  if (delivered) ++stats_.dead_lettered;
  // Released (or re-read in a new era) while this send was under way: it is not retried, because
  // nothing waits for it any more, and whoever reads the partition next re-reads the event (its
  // offset was never committed) and dead-letters it from there.
  const bool stale = tracker_.generation(tp) != attempt.generation;
  if (delivered || stale) {
    if (attempt.failures > 0)
      dead_letters_failing_since_.erase(dead_letters_failing_since_.find(attempt.failing_since));
    if (delivered) complete(tp, original.offset, attempt.generation);
    return;
  }
  // Neither stored nor dead-lettered: it stays pending (its offset is not committed) and is sent
  // again, from the loop (never from here: this runs inside the sink's poll()).
  const auto now = Clock::now();
  if (attempt.failures == 0) {
    attempt.failing_since = now;
    dead_letters_failing_since_.insert(now);
  }
  ++attempt.failures;
  // At most one line per partition and 10 s, so a letter that never goes through (retried every
  // 30 s in the end) is named at every attempt: its position is what the runbook's escape hatch needs.
  const std::string log_key = "dlq_retry:" + original.topic + "/" + std::to_string(original.partition);
  if (outcome == connectors::DeadLetterOutcome::rejected && !attempt.letter->headers_only) {
    // Kafka refuses the record itself (larger than the topic's max.message.bytes, say), so the
    // same bytes would be refused forever: send it at once with its headers only. The original
    // stays in its topic until retention; the headers name its position, size and SHA-256.
    rejections_log_.log(spdlog::level::warn, log_key,
                        "dead letter for " + describe(original) +
                            " refused by Kafka, sending it again with its headers only: " + error);
    attempt.letter->headers_only = true;
    dead_letter_retries_.emplace(now, std::move(attempt));
    return;
  }
  // Failed (the DLQ topic missing, no ACL, the broker down), or refused even without its payload:
  // again after a capped exponential backoff, so a letter that never goes through costs one send
  // per max_backoff. No jitter: one send per letter and max_backoff cannot swamp a broker, and a
  // plain schedule is what the log line below can state.
  const auto delay = Backoff::ceiling(options_.dead_letter_retry.initial_backoff,
                                      options_.dead_letter_retry.max_backoff, attempt.failures - 1);
  const auto failing_for = std::chrono::duration_cast<std::chrono::seconds>(now - attempt.failing_since);
  rejections_log_.log(spdlog::level::warn, log_key,
                      "dead letter for " + describe(original) + " not delivered (failure " +
                          std::to_string(attempt.failures) + ", failing for " + std::to_string(failing_for.count()) +
                          " s, next attempt in " + std::to_string(delay.count()) +
                          " ms); offsets of its partition are not committed past it: " + error);
  dead_letter_retries_.emplace(now + delay, std::move(attempt));
}

void Pipeline::resend_due_dead_letters() {
  const auto now = Clock::now();
  while (!dead_letter_retries_.empty() && dead_letter_retries_.begin()->first <= now) {
    auto due = dead_letter_retries_.extract(dead_letter_retries_.begin());
    send_dead_letter(std::move(due.mapped()));
  }
  if (dead_letters_failing_since_.empty() && !dead_letter_retries_reported_) return;
  const auto oldest =
      dead_letters_failing_since_.empty()
          ? std::chrono::milliseconds(0)
          : std::chrono::duration_cast<std::chrono::milliseconds>(now - *dead_letters_failing_since_.begin());
  observer_.on_dead_letters_retrying(dead_letters_failing_since_.size(), oldest);
  dead_letter_retries_reported_ = !dead_letters_failing_since_.empty();
}

void Pipeline::drop_dead_letter_retries(const std::vector<TopicPartition>& partitions) {
  std::size_t dropped = 0;
  for (auto it = dead_letter_retries_.begin(); it != dead_letter_retries_.end();) {
    const auto& original = it->second.letter->original;
    const bool released = std::any_of(partitions.begin(), partitions.end(), [&](const TopicPartition& tp) {
      return tp.partition == original.partition && tp.topic == original.topic;
    });
    if (!released) {
      ++it;
      continue;
    }
    // Only waiting letters are here, and every one of them failed at least once.
    dead_letters_failing_since_.erase(dead_letters_failing_since_.find(it->second.failing_since));
    it = dead_letter_retries_.erase(it);
    ++dropped;
  }
  if (dropped > 0) {
    spdlog::info(
        "dropped {} failed dead letter(s) of released partitions: their events are re-read from the "
        "committed offset and dead-lettered again there",
        dropped);
  }
}

void Pipeline::complete(connectors::TopicPartitionRef tp, std::int64_t offset, OffsetTracker::Generation generation) {
  tracker_.complete(tp, offset, generation);
}

void Pipeline::submit(std::vector<Batch> batches) {
  for (auto& batch : batches) writers_.submit(std::move(batch));
}

void Pipeline::drain_completions() {
  for (auto& outcome : writers_.take_completed()) {
    auto& batch = outcome.batch;
    std::vector<bool> rejected(batch.rows.size(), false);
    for (const auto& r : outcome.rejected) {
      rejected[r.index] = true;
      reject(std::move(batch.origins[r.index].message), batch.origins[r.index].generation, "write", "rejected_by_hbase",
             r.reason, /*skippable=*/false);
    }
    for (std::size_t i = 0; i < batch.rows.size(); ++i) {
      if (rejected[i]) continue;
      const auto& message = batch.origins[i].message;
      complete({message.topic, message.partition}, message.offset, batch.origins[i].generation);
      ++stats_.rows_stored;
      if (options_.startup_timeline != nullptr) options_.startup_timeline->rows_stored();
    }
  }
  stats_.inflight_rows = tracker_.pending_total();
  observer_.on_inflight(tracker_.pending_total(), tracker_.pending_bytes());
}

void Pipeline::commit(bool synchronous, const std::vector<TopicPartition>* only) {
  // Owned partitions only: the coordinator takes a commit from any member of the group, so one for
  // a partition that moved on would rewind its new owner.
  std::vector<connectors::PartitionOffset> offsets;
  if (synchronous) {
    // Final commits include every committable position, also ones whose async commit may have failed.
    for (const auto& tp : tracker_.partitions()) {
      if (!assigned_.contains(tp)) continue;
      if (only && std::find(only->begin(), only->end(), tp) == only->end()) continue;
      if (const auto position = tracker_.committable(tp)) offsets.push_back({tp, *position});
    }
  } else {
    for (auto& po : tracker_.uncommitted(Clock::now(), options_.commit_resend_after)) {
      if (assigned_.contains(po.tp)) offsets.push_back(std::move(po));
    }
  }
  if (offsets.empty()) return;
  try {
    if (synchronous) {
      tracker_.mark_sent(offsets, Clock::now());  // its answer counts for this generation only
      source_.commit_sync(offsets, shutdown_.left_for(ShutdownStep::commit, options_.sync_commit_timeout));
      on_commit_acknowledged(offsets);
    } else {
      // Committed only once acknowledged (on_commit_acknowledged): taken as committed when sent, a
      // commit that librdkafka never answered left an idle partition's lag behind for good.
      tracker_.mark_sent(offsets, Clock::now());
      source_.commit_async(offsets);
    }
    ++stats_.commits;
  } catch (const std::exception& e) {
    // Stored but not committed: a restart re-reads and rewrites identical cells. Not data loss.
    // Not awaited either: the positions are sent again at the next chance.
    tracker_.mark_commit_failed(offsets);
    observer_.on_commit_failure();
    spdlog::error(
        "offset commit failed (rows are written but not committed; they will be rewritten after a "
        "restart): {}",
        e.what());
  }
}

bool Pipeline::update_flow_control() {
  // Offsets count by window, not by pending events: completed offsets behind a stuck one are kept
  // too (offset_tracker.h). Bytes count what pending events hold (held_bytes.h).
  // The row bounds follow the flow the writers see (depth_controller.h), within the configured
  // caps; the byte bound is the configured one, exactly.
  const FlowLimits& caps = options_.flow;
  const std::size_t derived = derived_inflight_rows(writers_.estimate(), options_.batch.max_rows, options_.poll_batch);
  // Per partition the whole derived bound: librdkafka hands a partition's messages over in runs of
  // up to a fetch (thousands of events), and a smaller bound made the loop hold at every run.
  const std::size_t max_rows_per_partition = std::min(caps.max_inflight_rows_per_partition, derived);
  // The total keeps the flow's worth beside one partition at its bound: a partition stuck behind
  // one event keeps its window, and the others go on (with the total equal to the per-partition
  // bound, one stuck partition paused them all; review of issue 26).
  const std::size_t max_rows = std::min(caps.max_inflight_rows, derived + max_rows_per_partition);
  if (max_rows != reported_limits_.first || max_rows_per_partition != reported_limits_.second) {
    reported_limits_ = {max_rows, max_rows_per_partition};
    observer_.on_inflight_limits(max_rows, max_rows_per_partition);
  }
  const std::size_t kept = tracker_.window_total();
  const std::size_t bytes = tracker_.pending_bytes();
  const bool over_total = kept >= max_rows || bytes >= caps.max_inflight_bytes;
  const bool under_total = kept < max_rows * kResumeFraction && bytes < caps.max_inflight_bytes * kResumeFraction;
  std::vector<TopicPartition> to_pause;
  std::vector<TopicPartition> to_resume;
  for (const auto& tp : assigned_) {
    const std::size_t window = tracker_.window(tp);
    const bool is_paused = paused_.contains(tp);
    if (!is_paused && (over_total || window >= max_rows_per_partition)) {
      to_pause.push_back(tp);
    } else if (is_paused && under_total && window < max_rows_per_partition * kResumeFraction) {
      to_resume.push_back(tp);
    }
  }
  bool holding = false;
  if (to_pause.empty()) {
    holding_since_.reset();
  } else if (!holding_since_) {
    holding_since_ = Clock::now();
    holding = true;
  } else if (Clock::now() - *holding_since_ < kHoldBeforePause) {
    holding = true;
  } else {
    holding_since_.reset();
  }
  if (holding) to_pause.clear();
  if (!to_pause.empty()) {
    source_.pause(to_pause);
    paused_.insert(to_pause.begin(), to_pause.end());
    spdlog::info("paused {} partition(s): {} events in flight holding {} bytes, {} offsets kept", to_pause.size(),
                 tracker_.pending_total(), bytes, kept);
  }
  if (!to_resume.empty()) {
    for (const auto& tp : to_resume) paused_.erase(tp);
    // One waiting for a schema stays paused: retry_schema_holds() resumes it.
    std::erase_if(to_resume, [this](const TopicPartition& tp) { return schema_holds_.contains(tp); });
    source_.resume(to_resume);
    spdlog::info("resumed {} partition(s)", to_resume.size());
  }
  stats_.paused_partitions = paused_.size();
  observer_.on_paused_partitions(paused_.size());
  return holding;
}

bool Pipeline::drain_until(const std::function<bool()>& done, Clock::time_point deadline) {
  while (!done() && Clock::now() < deadline) {
    stats_.last_loop_ns = Clock::now().time_since_epoch().count();
    writers_.wait_for_completion(std::chrono::milliseconds(20));
    drain_completions();
    dead_letters_.poll(std::chrono::milliseconds(0));
    resend_due_dead_letters();
  }
  return done();
}

void Pipeline::on_commit_acknowledged(const std::vector<connectors::PartitionOffset>& offsets) {
  for (const auto& po : offsets) {
    // An answer for a partition given up since says nothing about its next owner's position.
    if (!assigned_.contains(po.tp)) continue;
    tracker_.mark_committed({po});
    if (const auto committed = tracker_.committed(po.tp)) observer_.on_commit(po.tp.topic, po.tp.partition, *committed);
  }
}

void Pipeline::on_commit_failed(const std::vector<connectors::PartitionOffset>& offsets, const std::string& /*error*/) {
  // The source logs the error (rate-limited); the positions are sent again at the next commit.
  observer_.on_async_commit_failure();
  tracker_.mark_commit_failed(offsets);
}

void Pipeline::on_revoked(const std::vector<TopicPartition>& partitions) {
  // Everything consumed from these partitions must be stored and committed before another
  // consumer takes them; what does not make it in time is left uncommitted and re-read there.
  spdlog::info("partitions revoked: {}; flushing their events", partitions.size());
  submit(batcher_.flush_all());
  // While stopping (close() revokes everything) the shutdown budget bounds the wait; a rebalance
  // waits at most as long as a whole shutdown would.
  const auto deadline =
      shutdown_.started() ? shutdown_.end_of(ShutdownStep::drain) : Clock::now() + options_.shutdown_deadline;
  drain_until(
      [&] {
        for (const auto& tp : partitions) {
          if (tracker_.pending(tp) > 0) return false;
        }
        return true;
      },
      deadline);
  commit(true, &partitions);
  release(partitions);
}

void Pipeline::on_lost(const std::vector<TopicPartition>& partitions) {
  // The group may have handed them to another member already: a commit would be refused or rewind
  // the new owner, and waiting for their writes would only delay rejoining. Their events still in
  // flight are written (the same cells the new owner writes) and never committed from here.
  spdlog::warn("partitions lost: {}; dropping their events without committing", partitions.size());
  release(partitions);
}

void Pipeline::release(const std::vector<TopicPartition>& partitions) {
  std::vector<std::pair<std::string, std::int32_t>> gone;
  for (const auto& tp : partitions) gone.emplace_back(tp.topic, tp.partition);
  observer_.on_partitions_revoked(gone);
  // librdkafka keeps an application's pause on a partition through its revocation and any later
  // assignment of it to this member (rdkafka_assignment.c lifts only its own rebalance pause): a
  // partition paused here when it was lost would never be read again after it came back. Lifted
  // now, while it is still assigned, whatever follows.
  std::vector<TopicPartition> paused_here;
  for (const auto& tp : partitions) {
    if (paused_.contains(tp) || schema_holds_.contains(tp)) paused_here.push_back(tp);
  }
  if (!paused_here.empty()) {
    try {
      source_.resume(paused_here);
    } catch (const std::exception& e) {
      spdlog::error("lifting the pause of {} released partition(s) failed; if assigned again they stay paused: {}",
                    paused_here.size(), e.what());
    }
  }
  for (const auto& tp : partitions) {
    tracker_.forget(tp);
    assigned_.erase(tp);
    paused_.erase(tp);
    // Its waiting messages were never tracked, so never committed: the next owner reads them.
    schema_holds_.erase(tp);
  }
  report_schema_holds();
  // Their failed dead letters would be sent again forever otherwise, held outside the in-flight
  // bound (the tracker no longer counts their bytes), and dead-lettered once more when the
  // partition comes back: they were never committed, so its next owner re-reads them.
  drop_dead_letter_retries(partitions);
  stats_.assigned_partitions = assigned_.size();
}

void Pipeline::on_assigned(const std::vector<TopicPartition>& partitions) {
  spdlog::info("partitions assigned: {}", partitions.size());
  // A fresh start per assignment: consumption resumes at the committed offset, which may lie below
  // the offsets this member tracked when it owned the partition before.
  for (const auto& tp : partitions) tracker_.forget(tp);
  drop_dead_letter_retries(partitions);
  assigned_.insert(partitions.begin(), partitions.end());
  stats_.assigned_partitions = assigned_.size();
  stats_.assignment_received = true;
  if (!partitions.empty() && options_.startup_timeline != nullptr) options_.startup_timeline->joined();
}

}  // namespace hbingest::ingest
