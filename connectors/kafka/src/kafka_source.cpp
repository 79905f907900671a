#include "hbingest/connectors/kafka_source.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <cstring>
#include <exception>
#include <stdexcept>
#include <utility>

#include "callback_guard.h"
#include "hbingest/connectors/kafka_error.h"
#include "hbingest/support/rate_limited_log.h"
#include "rdkafka_handles.h"
#include "security_watch.h"

namespace hbingest::connectors {

namespace {

using namespace std::chrono_literals;
using detail::check_error;
using detail::to_poll_ms;

constexpr std::string_view kConsumerWhat = "kafka consumer";
constexpr auto kClosePollInterval = 100ms;
constexpr auto kSyncCommitPollInterval = 100ms;

std::string describe(const std::vector<PartitionOffset>& offsets) {
  std::string out;
  for (const auto& po : offsets) {
    if (!out.empty()) out += ", ";
    out += po.tp.topic + "[" + std::to_string(po.tp.partition) + "]@" + std::to_string(po.offset);
  }
  return out;
}

std::string describe(const std::vector<TopicPartition>& partitions) {
  std::string out;
  for (const auto& tp : partitions) {
    if (!out.empty()) out += ", ";
    out += tp.topic + "[" + std::to_string(tp.partition) + "]";
  }
  return out;
}

// The first partition-level error in a list that librdkafka filled in.
void check_partition_errors(const rd_kafka_topic_partition_list_t* list, std::string_view context) {
  if (list == nullptr) return;
  for (int i = 0; i < list->cnt; ++i) {
    const auto& e = list->elems[i];
    if (e.err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      check_error(e.err, std::string(context) + " (" + e.topic + "[" + std::to_string(e.partition) + "])");
    }
  }
}

}  // namespace

class KafkaSource::Impl {
 public:
  explicit Impl(KafkaSourceOptions options) : options_(std::move(options)) {
    if (options_.topics.empty()) throw std::invalid_argument("kafka consumer: topics: at least one topic is required");
    const bool has_bootstrap = !options_.bootstrap_servers.empty() || options_.properties.contains("bootstrap.servers");
    if (!has_bootstrap) throw std::invalid_argument("kafka consumer: bootstrap_servers is required");
    if (options_.group_id.empty() && !options_.properties.contains("group.id")) {
      throw std::invalid_argument("kafka consumer: group_id is required");
    }
    for (const char* forced : {"enable.auto.commit", "enable.auto.offset.store"}) {
      const auto it = options_.properties.find(forced);
      if (it != options_.properties.end() && it->second != "false") {
        throw std::invalid_argument(std::string("kafka consumer: property '") + forced + "' = '" + it->second +
                                    "': hbingest requires false (offsets are committed only once the events "
                                    "are stored)");
      }
    }

    detail::ConfPtr conf(rd_kafka_conf_new());
    // Defaults that the properties map may override.
    detail::set_property(conf.get(), "auto.offset.reset", "earliest", kConsumerWhat);
    detail::set_property(conf.get(), "enable.partition.eof", "false", kConsumerWhat);
    // The read-ahead is part of the process's memory: librdkafka's 64 MiB default alone would be
    // most of the footprint. `hbingest run` sets it inside writer.max_inflight_bytes
    // (app::kafka_read_ahead_bytes); 4 MiB is the fallback for the other users of the source.
    detail::set_property(conf.get(), "queued.max.messages.kbytes", "4096", kConsumerWhat);
    for (const auto& [key, value] : options_.properties) detail::set_property(conf.get(), key, value, kConsumerWhat);
    if (!options_.bootstrap_servers.empty()) {
      detail::set_property(conf.get(), "bootstrap.servers", options_.bootstrap_servers, kConsumerWhat);
    }
    if (!options_.group_id.empty()) detail::set_property(conf.get(), "group.id", options_.group_id, kConsumerWhat);
    if (!options_.group_instance_id.empty()) {
      detail::set_property(conf.get(), "group.instance.id", options_.group_instance_id, kConsumerWhat);
    }
    // At-least-once: librdkafka must never commit (or even store) an offset on its own, because a
    // polled event is not done until HBase or the dead-letter topic acknowledged it. The pipeline
    // commits explicit offsets from its ack tracker.
    detail::set_property(conf.get(), "enable.auto.commit", "false", kConsumerWhat);
    detail::set_property(conf.get(), "enable.auto.offset.store", "false", kConsumerWhat);
    if (options_.statistics_interval_ms > 0 && options_.on_statistics) {
      detail::set_property(conf.get(), "statistics.interval.ms", std::to_string(options_.statistics_interval_ms),
                           kConsumerWhat);
      rd_kafka_conf_set_stats_cb(conf.get(), &Impl::on_stats);
    }
    rd_kafka_conf_set_opaque(conf.get(), this);
    rd_kafka_conf_set_rebalance_cb(conf.get(), &Impl::on_rebalance);
    rd_kafka_conf_set_error_cb(conf.get(), &Impl::on_error);
    detail::route_logs_to_spdlog(conf.get());

    std::array<char, 512> errstr{};
    rk_.reset(rd_kafka_new(RD_KAFKA_CONSUMER, conf.get(), errstr.data(), errstr.size()));
    if (!rk_) throw std::invalid_argument(std::string("kafka consumer: cannot create client: ") + errstr.data());
    conf.release();  // rd_kafka_new owns it on success
    async_commits_.reset(rd_kafka_queue_new(rk_.get()));
    // Error, statistics and rebalance events are then served by rd_kafka_consumer_poll().
    if (options_.startup_check_timeout.count() > 0) {
      // Before the redirect below: the check serves the error callback with rd_kafka_poll().
      broker_answered_ = security_.check_startup(rk_.get(), options_.startup_check_timeout);
    }
    check_error(rd_kafka_poll_set_consumer(rk_.get()), "kafka consumer: redirect main queue", rk_.get());

    std::vector<TopicPartition> subscription;
    for (const auto& topic : options_.topics) subscription.push_back({topic, RD_KAFKA_PARTITION_UA});
    const auto list = detail::to_partition_list(subscription);
    check_error(rd_kafka_subscribe(rk_.get(), list.get()), "kafka consumer: subscribe to " + describe(subscription),
                rk_.get());
  }

  ~Impl() {
    if (state_ == State::kOpen) {
      try {
        close(options_.close_timeout);
      } catch (const std::exception& e) {
        spdlog::warn("kafka consumer: close on destruction: {}", e.what());
      } catch (...) {
        spdlog::warn("kafka consumer: close on destruction failed");
      }
    }
    async_commits_.reset();  // a queue must not outlive its handle
    // After an abandoned close, a plain rd_kafka_destroy() would run the blocking close again.
    if (abandoned_) rd_kafka_destroy_flags(rk_.release(), RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
  }

  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  Impl(Impl&&) = delete;
  Impl& operator=(Impl&&) = delete;

  void set_listener(RebalanceListener* listener) noexcept { listener_ = listener; }
  void set_commit_listener(CommitListener* listener) noexcept { commit_listener_ = listener; }

  std::vector<SourceMessage> poll(std::size_t max_messages, std::chrono::milliseconds timeout) {
    if (state_ != State::kOpen) throw std::logic_error("kafka consumer: poll() during or after close()");
    throw_if_fatal();
    guard_.rethrow_pending();
    rd_kafka_queue_poll_callback(async_commits_.get(), 0);  // answers to commit_async()
    std::vector<SourceMessage> out;
    int wait_ms = to_poll_ms(timeout);
    while (out.size() < max_messages) {
      detail::MessagePtr msg(rd_kafka_consumer_poll(rk_.get(), wait_ms));
      wait_ms = 0;  // only the first message is waited for
      if (!msg) break;
      if (msg->err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        handle_message_error(*msg);
        continue;
      }
      out.push_back(copy(*msg));
    }
    // A fatal error outranks what a callback kept meanwhile (an unassign refused because of it).
    throw_if_fatal();
    guard_.rethrow_pending();
    return out;
  }

  void commit_async(const std::vector<PartitionOffset>& offsets) {
    ensure_open("commit");
    throw_if_fatal();
    // An empty list must never reach rd_kafka_commit: NULL there means "the current positions".
    if (offsets.empty()) return;
    const auto list = detail::to_partition_list(offsets);
    // Answered on a queue of our own (served by poll() and commit_sync()), so that commit_sync()
    // can wait for these answers without serving the consumer's messages and rebalances.
    const rd_kafka_resp_err_t err =
        rd_kafka_commit_queue(rk_.get(), list.get(), async_commits_.get(), &Impl::on_async_commit, this);
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      record_async_commit_failure(err, offsets);
      return;
    }
    ++unanswered_async_commits_;
  }

  void commit_sync(const std::vector<PartitionOffset>& offsets, std::chrono::milliseconds timeout) {
    ensure_open("commit");
    throw_if_fatal();
    if (offsets.empty()) return;  // see commit_async
    const auto list = detail::to_partition_list(offsets);
    const std::string context = "kafka consumer: commit " + describe(offsets);
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    await_async_commits(std::chrono::steady_clock::now() + timeout / 2);
    // Through a private queue so that the wait is bounded: rd_kafka_commit(sync) waits forever
    // while no coordinator is reachable. The result comes back as a callback served from that
    // queue, so `result` on this stack frame is only ever touched from the loop below.
    SyncCommitResult result;
    detail::QueuePtr queue(rd_kafka_queue_new(rk_.get()));
    check_error(rd_kafka_commit_queue(rk_.get(), list.get(), queue.get(), &Impl::on_sync_commit, &result), context,
                rk_.get());
    do {
      rd_kafka_queue_poll_callback(queue.get(), to_poll_ms(std::min(kSyncCommitPollInterval, timeout)));
    } while (!result.done && std::chrono::steady_clock::now() < deadline);
    if (!result.done) {
      throw KafkaError(
          RD_KAFKA_RESP_ERR__TIMED_OUT, rd_kafka_err2name(RD_KAFKA_RESP_ERR__TIMED_OUT), false, true,
          context + ": no answer from the group coordinator within " + std::to_string(timeout.count()) + " ms");
    }
    check_error(result.err, context, rk_.get());
    if (result.partition_err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      check_error(result.partition_err, context + " (" + result.partition + ")");
    }
  }

  void pause(const std::vector<TopicPartition>& partitions, bool pause) {
    ensure_open(pause ? "pause" : "resume");
    if (partitions.empty()) return;
    const auto list = detail::to_partition_list(partitions);
    const std::string context = std::string("kafka consumer: ") + (pause ? "pause " : "resume ") + describe(partitions);
    check_error(
        pause ? rd_kafka_pause_partitions(rk_.get(), list.get()) : rd_kafka_resume_partitions(rk_.get(), list.get()),
        context, rk_.get());
    check_partition_errors(list.get(), context);
  }

  std::vector<TopicPartition> assignment() const {
    // After a fatal error (fenced) the group has given the partitions to another member.
    if (state_ == State::kClosed || fatal()) return {};
    rd_kafka_topic_partition_list_t* raw = nullptr;
    check_error(rd_kafka_assignment(rk_.get(), &raw), "kafka consumer: assignment", rk_.get());
    const detail::PartitionListPtr list(raw);
    return detail::from_partition_list(list.get());
  }

  std::vector<PartitionOffset> committed(const std::vector<TopicPartition>& partitions,
                                         std::chrono::milliseconds timeout) const {
    ensure_open("committed");
    const auto list = detail::to_partition_list(partitions);
    const std::string context = "kafka consumer: read committed offsets of " + describe(partitions);
    check_error(rd_kafka_committed(rk_.get(), list.get(), to_poll_ms(timeout)), context, rk_.get());
    check_partition_errors(list.get(), context);
    return detail::offsets_from_partition_list(list.get());
  }

  void close(std::chrono::milliseconds timeout) {
    if (state_ != State::kOpen) return;
    if (fatal()) {
      // Fenced, or otherwise unusable: nothing is ours to commit or hand back, and librdkafka could
      // not leave the group anyway (its close would only answer _FATAL).
      state_ = State::kClosed;
      abandoned_ = true;
      spdlog::info("kafka consumer: closed without leaving group {} after a fatal error", group_name());
      return;
    }
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    // Closing, not closed: the listener's on_revoked may still commit the revoked partitions.
    state_ = State::kClosing;
    struct MarkClosed {
      State& state;
      ~MarkClosed() { state = State::kClosed; }
    } mark_closed{state_};
    // The listener gets the revoke here, while this consumer is still a full group member: inside
    // librdkafka's close the cooperative protocol has already left the group, and a commit from
    // on_revoked then fails with UNKNOWN_MEMBER_ID. The revoke callback during close only unassigns.
    if (listener_ != nullptr) {
      std::vector<TopicPartition> owned;
      guard_.guarded("assignment before close", [&] { owned = assignment(); });
      if (!owned.empty()) {
        guard_.guarded("on_revoked", [&] { listener_->on_revoked(owned); });
        spdlog::info("kafka consumer: revoked {} (closing)", describe(owned));
      }
    }
    // A static member must not leave: that it stays in the group (until session.timeout.ms) is
    // what gives a restarted daemon its partitions back without a rebalance. Unsubscribing would
    // send LeaveGroup; librdkafka's own close does not for a static member (KIP-345). So the
    // workaround below is for dynamic members only; a static member's close is bounded by the
    // deadline as well.
    std::size_t dropped = options_.group_instance_id.empty() ? leave_assignment(deadline) : 0;
    // rd_kafka_consumer_close() has no deadline (a commit waiting for an unreachable coordinator
    // holds it for session.timeout.ms); the queue variant lets us give up. Serving the queue runs
    // what is left of the revoke path (unassign) on this thread.
    detail::QueuePtr queue(rd_kafka_queue_new(rk_.get()));
    check_error(detail::ErrorPtr(rd_kafka_consumer_close_queue(rk_.get(), queue.get())), "kafka consumer: close");
    while (!rd_kafka_consumer_closed(rk_.get())) {
      if (std::chrono::steady_clock::now() >= deadline) {
        abandoned_ = true;
        spdlog::warn("kafka consumer: close did not finish within {} ms; leaving the group uncleanly", timeout.count());
        break;
      }
      // The close queue also receives the messages fetched ahead of poll(). Served as callbacks
      // (rd_kafka_queue_poll_callback) librdkafka aborts on the first one ("assert: res !=
      // RD_KAFKA_OP_RES_PASS"); served the way rd_kafka_consumer_poll() serves its queue, they come
      // back here and are dropped: never handed out, never committed, re-read by the next owner.
      const detail::MessagePtr message(rd_kafka_consume_queue(queue.get(), to_poll_ms(kClosePollInterval)));
      if (message && message->err == RD_KAFKA_RESP_ERR_NO_ERROR) ++dropped;
    }
    if (dropped > 0) spdlog::info("kafka consumer: dropped {} message(s) fetched but not polled before close", dropped);
    guard_.rethrow_pending();
  }

  std::uint64_t failed_async_commits() const noexcept { return failed_async_commits_; }
  bool broker_answered() const noexcept { return broker_answered_; }

 private:
  static Impl& self(void* opaque) { return *static_cast<Impl*>(opaque); }

  bool fatal() const { return rd_kafka_fatal_error(rk_.get(), nullptr, 0) != RD_KAFKA_RESP_ERR_NO_ERROR; }

  std::string group_name() const {
    if (!options_.group_id.empty()) return options_.group_id;
    const auto it = options_.properties.find("group.id");
    return it == options_.properties.end() ? std::string() : it->second;
  }

  // librdkafka's fatal error (it raises one for the consumer only when the broker fenced this
  // static member), as the exception that stops the owner. Fenced: another process runs with this
  // group.instance.id and now owns these partitions, so this one must stop at once and commit
  // nothing more.
  void throw_if_fatal() const {
    std::array<char, 512> reason{};
    const rd_kafka_resp_err_t err = rd_kafka_fatal_error(rk_.get(), reason.data(), reason.size());
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return;
    std::string message;
    if (err == RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID) {
      message = "kafka consumer: another live member joined group " + group_name() + " with group.instance.id " +
                options_.group_instance_id +
                " and took its partitions (fenced); stopping without committing anything more. Every running "
                "daemon needs its own kafka.group_instance_id";
    } else {
      message = std::string("kafka consumer: fatal error: ") + reason.data();
    }
    throw KafkaError(static_cast<int>(err), rd_kafka_err2name(err), true, false,
                     message + " (" + rd_kafka_err2name(err) + ")");
  }

  // Unsubscribes and serves the consumer queue until the group has taken the partitions back, so
  // that the close which follows has nothing left to revoke. librdkafka 2.0.2 (Debian 12's) can
  // block forever in rd_kafka_incremental_unassign() when the cooperative protocol's revoke is
  // served from inside rd_kafka_consumer_close_queue() while the group rebalances (seen here: the
  // first of two members closing hung in the unassign; librdkafka issue #4527, fixed in 2.4.0),
  // and crashed once in CI at the same point. Served by rd_kafka_consumer_poll() the revoke is an
  // ordinary one. Returns the number of messages fetched ahead and dropped on the way.
  std::size_t leave_assignment(std::chrono::steady_clock::time_point deadline) {
    std::size_t dropped = 0;
    const auto unsubscribed = rd_kafka_unsubscribe(rk_.get());
    if (unsubscribed != RD_KAFKA_RESP_ERR_NO_ERROR) {
      spdlog::warn("kafka consumer: unsubscribe before close: {}", rd_kafka_err2str(unsubscribed));
      return dropped;
    }
    while (std::chrono::steady_clock::now() < deadline) {
      std::vector<TopicPartition> owned;
      guard_.guarded("assignment while leaving", [&] { owned = assignment(); });
      if (owned.empty()) break;
      const detail::MessagePtr message(rd_kafka_consumer_poll(rk_.get(), to_poll_ms(kClosePollInterval)));
      if (message && message->err == RD_KAFKA_RESP_ERR_NO_ERROR) ++dropped;
    }
    return dropped;
  }

  // A synchronous commit is a final one (revoke, shutdown), but librdkafka re-sends an earlier
  // asynchronous commit by itself after a retriable error or a lost connection, behind commits sent
  // since: one still unanswered can be stored after this one and rewind the partition, with no
  // chance left to commit it again (seen on librdkafka's mock cluster: the close's commit, then an
  // older one retried 2 s later). So their answers are awaited first, for at most half the time.
  void await_async_commits(std::chrono::steady_clock::time_point until) {
    while (unanswered_async_commits_ > 0 && std::chrono::steady_clock::now() < until) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(until - std::chrono::steady_clock::now());
      rd_kafka_queue_poll_callback(async_commits_.get(), to_poll_ms(std::min(kSyncCommitPollInterval, left)));
    }
    if (unanswered_async_commits_ > 0) {
      spdlog::warn(
          "kafka consumer: {} earlier commit(s) still unanswered before a final one; the coordinator may store "
          "one after it",
          unanswered_async_commits_);
    }
  }

  struct SyncCommitResult {
    bool done = false;
    rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR_NO_ERROR;
    rd_kafka_resp_err_t partition_err = RD_KAFKA_RESP_ERR_NO_ERROR;  // the first one
    std::string partition;
  };

  static void on_sync_commit(rd_kafka_t*, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* offsets,
                             void* opaque) {
    auto& result = *static_cast<SyncCommitResult*>(opaque);
    result.done = true;
    result.err = err;
    for (int i = 0; offsets != nullptr && i < offsets->cnt; ++i) {
      if (offsets->elems[i].err != RD_KAFKA_RESP_ERR_NO_ERROR) {
        result.partition_err = offsets->elems[i].err;
        result.partition =
            std::string(offsets->elems[i].topic) + "[" + std::to_string(offsets->elems[i].partition) + "]";
        break;
      }
    }
  }

  // Commit, pause and resume stay allowed while closing (from inside on_revoked).
  void ensure_open(const char* operation) const {
    if (state_ == State::kClosed)
      throw std::logic_error(std::string("kafka consumer: ") + operation + "() after close()");
  }

  void log_limited(rd_kafka_resp_err_t err, const std::string& what) {
    if (const auto suppressed = error_log_.admit(rd_kafka_err2name(err))) {
      if (*suppressed > 0) {
        spdlog::warn("kafka consumer: {} ({} similar suppressed)", what, *suppressed);
      } else {
        spdlog::warn("kafka consumer: {}", what);
      }
    }
  }

  void handle_message_error(const rd_kafka_message_t& msg) {
    if (msg.err == RD_KAFKA_RESP_ERR__PARTITION_EOF) return;
    std::string where;
    if (msg.rkt != nullptr) {
      where = std::string(" on ") + rd_kafka_topic_name(msg.rkt) + "[" + std::to_string(msg.partition) + "]";
      if (msg.offset >= 0) where += "@" + std::to_string(msg.offset);
    }
    if (msg.err == RD_KAFKA_RESP_ERR__FATAL) throw_if_fatal();
    log_limited(msg.err, std::string("consume error") + where + ": " + rd_kafka_message_errstr(&msg));
  }

  static SourceMessage copy(const rd_kafka_message_t& msg) {
    SourceMessage out;
    out.topic = rd_kafka_topic_name(msg.rkt);
    out.partition = msg.partition;
    out.offset = msg.offset;
    rd_kafka_timestamp_type_t type = RD_KAFKA_TIMESTAMP_NOT_AVAILABLE;
    const std::int64_t ts = rd_kafka_message_timestamp(&msg, &type);
    out.timestamp_ms = type == RD_KAFKA_TIMESTAMP_NOT_AVAILABLE ? -1 : ts;
    if (msg.key != nullptr) out.key.emplace(static_cast<const char*>(msg.key), msg.key_len);
    if (msg.payload != nullptr) out.payload.emplace(static_cast<const char*>(msg.payload), msg.len);
    copy_headers(msg, out.headers);
    return out;
  }

  // librdkafka parses a message's headers on first ask and answers __NOENT when there are none:
  // a message without headers costs one call.
  static void copy_headers(const rd_kafka_message_t& msg, std::vector<MessageHeader>& out) {
    rd_kafka_headers_t* headers = nullptr;  // owned by the message
    if (rd_kafka_message_headers(&msg, &headers) != RD_KAFKA_RESP_ERR_NO_ERROR || headers == nullptr) return;
    const std::size_t count = rd_kafka_header_cnt(headers);
    out.reserve(count);
    const char* name = nullptr;
    const void* value = nullptr;
    std::size_t size = 0;
    for (std::size_t i = 0; rd_kafka_header_get_all(headers, i, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR;
         ++i) {
      auto& header = out.emplace_back();
      header.name = name;
      if (value != nullptr) header.value.emplace(static_cast<const char*>(value), size);
    }
  }

  void report_async_commit_acknowledged(const std::vector<PartitionOffset>& offsets) {
    if (commit_listener_ == nullptr || offsets.empty()) return;
    guard_.guarded("on_commit_acknowledged", [&] { commit_listener_->on_commit_acknowledged(offsets); });
  }

  void record_async_commit_failure(rd_kafka_resp_err_t err, const std::vector<PartitionOffset>& offsets) {
    ++failed_async_commits_;
    const std::string error = rd_kafka_err2str(err);
    log_limited(err, "commit " + describe(offsets) + " failed: " + error + " (the events are stored; sent again)");
    if (commit_listener_ == nullptr) return;
    guard_.guarded("on_commit_failed", [&] { commit_listener_->on_commit_failed(offsets, error); });
  }

  static void on_rebalance(rd_kafka_t* rk, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* partitions,
                           void* opaque) {
    Impl& impl = self(opaque);
    if (impl.fatal()) {
      // Fenced: the partitions already belong to another member; librdkafka revokes them as lost
      // and would refuse any (un)assign with _FATAL. The listener drops them without committing;
      // poll() then throws the fatal error.
      if (err == RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS && impl.listener_ != nullptr && impl.state_ == State::kOpen) {
        const auto tps = detail::from_partition_list(partitions);
        impl.guard_.guarded("on_lost", [&] { impl.listener_->on_lost(tps); });
      }
      return;
    }
    const bool cooperative = std::strcmp(rd_kafka_rebalance_protocol(rk), "COOPERATIVE") == 0;
    const auto tps = detail::from_partition_list(partitions);
    if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
      impl.guard_.guarded("assign", [&] {
        if (cooperative) {
          check_error(detail::ErrorPtr(rd_kafka_incremental_assign(rk, partitions)),
                      "kafka consumer: incremental assign " + describe(tps));
        } else {
          check_error(rd_kafka_assign(rk, partitions), "kafka consumer: assign " + describe(tps), rk);
        }
      });
      if (!tps.empty()) spdlog::info("kafka consumer: assigned {}", describe(tps));
      if (impl.listener_ != nullptr && impl.state_ == State::kOpen)
        impl.guard_.guarded("on_assigned", [&] { impl.listener_->on_assigned(tps); });
      return;
    }
    if (err == RD_KAFKA_RESP_ERR__REVOKE_PARTITIONS) {
      // Lost (this member missed its session or max.poll.interval.ms): the group may have given the
      // partitions to another member already, whose position a commit from here would rewind.
      const bool lost = rd_kafka_assignment_lost(rk) != 0;
      if (lost) {
        spdlog::warn(
            "kafka consumer: assignment lost (session timed out or max.poll.interval.ms exceeded); {} "
            "dropped without committing",
            describe(tps));
      }
      // A revoke reaches the listener while the partitions are still ours, so it can still commit
      // them. While closing it already ran from close().
      if (impl.listener_ != nullptr && impl.state_ == State::kOpen) {
        if (lost) {
          impl.guard_.guarded("on_lost", [&] { impl.listener_->on_lost(tps); });
        } else {
          impl.guard_.guarded("on_revoked", [&] { impl.listener_->on_revoked(tps); });
        }
      }
      if (!tps.empty() && impl.state_ == State::kOpen) spdlog::info("kafka consumer: revoked {}", describe(tps));
      impl.guard_.guarded("unassign", [&] {
        if (cooperative) {
          check_error(detail::ErrorPtr(rd_kafka_incremental_unassign(rk, partitions)),
                      "kafka consumer: incremental unassign " + describe(tps));
        } else {
          check_error(rd_kafka_assign(rk, nullptr), "kafka consumer: unassign", rk);
        }
      });
      return;
    }
    spdlog::error("kafka consumer: rebalance error: {}", rd_kafka_err2str(err));
    impl.guard_.guarded("unassign after rebalance error", [&] {
      if (cooperative) {
        check_error(detail::ErrorPtr(rd_kafka_incremental_unassign(rk, partitions)),
                    "kafka consumer: incremental unassign");
      } else {
        check_error(rd_kafka_assign(rk, nullptr), "kafka consumer: unassign", rk);
      }
    });
  }

  static void on_async_commit(rd_kafka_t*, rd_kafka_resp_err_t err, rd_kafka_topic_partition_list_t* offsets,
                              void* opaque) {
    Impl& impl = self(opaque);
    if (impl.unanswered_async_commits_ > 0) --impl.unanswered_async_commits_;
    // _NO_OFFSET: nothing needed committing (librdkafka had these offsets committed already).
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR && err != RD_KAFKA_RESP_ERR__NO_OFFSET) {
      impl.record_async_commit_failure(err, detail::offsets_from_partition_list(offsets));
      return;
    }
    if (offsets == nullptr) return;
    // Per partition: one may be refused (unknown partition, not authorized) while others are stored.
    std::vector<PartitionOffset> stored;
    std::vector<PartitionOffset> refused;
    rd_kafka_resp_err_t refusal = RD_KAFKA_RESP_ERR_NO_ERROR;
    for (int i = 0; i < offsets->cnt; ++i) {
      const auto& elem = offsets->elems[i];
      const PartitionOffset po{{elem.topic, elem.partition}, elem.offset};
      if (elem.err == RD_KAFKA_RESP_ERR_NO_ERROR) {
        stored.push_back(po);
      } else {
        refused.push_back(po);
        refusal = elem.err;
      }
    }
    if (!refused.empty()) impl.record_async_commit_failure(refusal, refused);
    impl.report_async_commit_acknowledged(stored);
  }

  static void on_error(rd_kafka_t*, int err_code, const char* reason, void* opaque) {
    Impl& impl = self(opaque);
    const auto err = static_cast<rd_kafka_resp_err_t>(err_code);
    // Thrown by the poll() serving this callback (throw_if_fatal), with the id when fenced.
    if (err == RD_KAFKA_RESP_ERR__FATAL) return;
    if (impl.security_.on_error(err, reason)) return;  // TLS/SASL, or anything during the startup check
    // _TRANSPORT, _ALL_BROKERS_DOWN, _RESOLVE...: librdkafka keeps retrying by itself.
    impl.log_limited(err, std::string(rd_kafka_err2name(err)) + ": " + reason);
  }

  static int on_stats(rd_kafka_t*, char* json, std::size_t json_len, void* opaque) {
    Impl& impl = self(opaque);
    impl.guard_.guarded("on_statistics", [&] { impl.options_.on_statistics(std::string(json, json_len)); });
    return 0;  // librdkafka frees the buffer
  }

  KafkaSourceOptions options_;
  RebalanceListener* listener_ = nullptr;
  CommitListener* commit_listener_ = nullptr;
  CallbackGuard guard_{"kafka consumer"};
  support::RateLimitedLog error_log_{detail::kErrorLogInterval};
  std::uint64_t failed_async_commits_ = 0;
  std::size_t unanswered_async_commits_ = 0;
  enum class State { kOpen, kClosing, kClosed };
  State state_ = State::kOpen;
  bool abandoned_ = false;
  detail::SecurityWatch security_{std::string(kConsumerWhat), options_.properties, options_.on_security_error, guard_};
  bool broker_answered_ = true;
  // Destroyed before every member but the queue below, so no callback can run against members
  // already gone.
  detail::KafkaPtr rk_;
  // Served only by this class's own calls; destroyed before the handle it belongs to.
  detail::QueuePtr async_commits_;
};

KafkaSource::KafkaSource(KafkaSourceOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
KafkaSource::~KafkaSource() = default;

void KafkaSource::set_rebalance_listener(RebalanceListener* listener) noexcept { impl_->set_listener(listener); }
void KafkaSource::set_commit_listener(CommitListener* listener) noexcept { impl_->set_commit_listener(listener); }

std::vector<SourceMessage> KafkaSource::poll(std::size_t max_messages, std::chrono::milliseconds timeout) {
  return impl_->poll(max_messages, timeout);
}

void KafkaSource::commit_async(const std::vector<PartitionOffset>& offsets) { impl_->commit_async(offsets); }
void KafkaSource::commit_sync(const std::vector<PartitionOffset>& offsets, std::chrono::milliseconds timeout) {
  impl_->commit_sync(offsets, timeout);
}

void KafkaSource::pause(const std::vector<TopicPartition>& partitions) { impl_->pause(partitions, true); }
void KafkaSource::resume(const std::vector<TopicPartition>& partitions) { impl_->pause(partitions, false); }
std::vector<TopicPartition> KafkaSource::assignment() const { return impl_->assignment(); }
void KafkaSource::close(std::chrono::milliseconds timeout) { impl_->close(timeout); }
std::uint64_t KafkaSource::failed_async_commits() const noexcept { return impl_->failed_async_commits(); }
bool KafkaSource::broker_answered_at_startup() const noexcept { return impl_->broker_answered(); }

std::vector<PartitionOffset> KafkaSource::committed(const std::vector<TopicPartition>& partitions,
                                                    std::chrono::milliseconds timeout) const {
  return impl_->committed(partitions, timeout);
}

}  // namespace hbingest::connectors
