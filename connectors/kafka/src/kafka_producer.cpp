#include "hbingest/connectors/kafka_producer.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <exception>
#include <stdexcept>
#include <unordered_map>

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

constexpr std::string_view kProducerWhat = "kafka producer";
constexpr auto kQueueFullPoll = 100ms;
// Large enough for a 5 MB original plus headers in the dead-letter topic. The topic (or broker)
// must allow it too: max.message.bytes on the topic, message.max.bytes on the broker.
constexpr std::string_view kMaxMessageBytes = "10485760";

void* to_opaque(std::uint64_t id) { return reinterpret_cast<void*>(static_cast<std::uintptr_t>(id)); }
std::uint64_t from_opaque(void* opaque) { return static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(opaque)); }

}  // namespace

class KafkaProducer::Impl {
 public:
  explicit Impl(KafkaProducerOptions options) : options_(std::move(options)) {
    if (options_.bootstrap_servers.empty() && !options_.properties.contains("bootstrap.servers")) {
      throw std::invalid_argument("kafka producer: bootstrap_servers is required");
    }
    detail::ConfPtr conf(rd_kafka_conf_new());
    // Defaults: a dead letter must not be lost or written twice on a retry.
    detail::set_property(conf.get(), "acks", "all", kProducerWhat);
    detail::set_property(conf.get(), "enable.idempotence", "true", kProducerWhat);
    detail::set_property(conf.get(), "message.max.bytes", std::string(kMaxMessageBytes), kProducerWhat);
    for (const auto& [key, value] : options_.properties) detail::set_property(conf.get(), key, value, kProducerWhat);
    if (!options_.bootstrap_servers.empty()) {
      detail::set_property(conf.get(), "bootstrap.servers", options_.bootstrap_servers, kProducerWhat);
    }
    rd_kafka_conf_set_opaque(conf.get(), this);
    rd_kafka_conf_set_dr_msg_cb(conf.get(), &Impl::on_delivery);
    rd_kafka_conf_set_error_cb(conf.get(), &Impl::on_error);
    detail::route_logs_to_spdlog(conf.get());

    std::array<char, 512> errstr{};
    rk_.reset(rd_kafka_new(RD_KAFKA_PRODUCER, conf.get(), errstr.data(), errstr.size()));
    if (!rk_) throw std::invalid_argument(std::string("kafka producer: cannot create client: ") + errstr.data());
    conf.release();  // rd_kafka_new owns it on success
    if (options_.startup_check_timeout.count() > 0) security_.check_startup(rk_.get(), options_.startup_check_timeout);
  }

  ~Impl() {
    // Callbacks served while tearing down must not reach user code that may be gone already.
    destroying_ = true;
    rd_kafka_purge(rk_.get(), RD_KAFKA_PURGE_F_QUEUE | RD_KAFKA_PURGE_F_INFLIGHT | RD_KAFKA_PURGE_F_NON_BLOCKING);
  }

  Impl(const Impl&) = delete;
  Impl& operator=(const Impl&) = delete;
  Impl(Impl&&) = delete;
  Impl& operator=(Impl&&) = delete;

  void produce(const ProducerRecord& record, DeliveryCallback callback) {
    const std::string topic(record.topic);
    const std::string context = "kafka producer: produce " + std::to_string(record.payload.size()) + " bytes to " +
                                topic + (record.partition >= 0 ? "[" + std::to_string(record.partition) + "]" : "");
    const std::uint64_t id = next_id_++;
    const auto deadline = std::chrono::steady_clock::now() + options_.queue_full_timeout;
    while (true) {
      // A fresh headers list per attempt: librdkafka takes ownership only when produce succeeds.
      detail::HeadersPtr headers;
      if (!record.headers.empty()) {
        headers.reset(rd_kafka_headers_new(record.headers.size()));
        for (const auto& [name, value] : record.headers) {
          check_error(rd_kafka_header_add(headers.get(), name.data(), static_cast<ssize_t>(name.size()), value.data(),
                                          static_cast<ssize_t>(value.size())),
                      context + ": header " + name, rk_.get());
        }
      }
      std::vector<rd_kafka_vu_t> vus;
      vus.reserve(7);
      auto& t = vus.emplace_back();
      t.vtype = RD_KAFKA_VTYPE_TOPIC;
      t.u.cstr = topic.c_str();
      auto& v = vus.emplace_back();
      v.vtype = RD_KAFKA_VTYPE_VALUE;
      v.u.mem.ptr = const_cast<char*>(record.payload.data());  // never written
      v.u.mem.size = record.payload.size();
      if (record.key) {
        auto& k = vus.emplace_back();
        k.vtype = RD_KAFKA_VTYPE_KEY;
        k.u.mem.ptr = const_cast<char*>(record.key->data());
        k.u.mem.size = record.key->size();
      }
      if (record.partition >= 0) {
        auto& p = vus.emplace_back();
        p.vtype = RD_KAFKA_VTYPE_PARTITION;
        p.u.i32 = record.partition;
      }
      if (headers) {
        auto& h = vus.emplace_back();
        h.vtype = RD_KAFKA_VTYPE_HEADERS;
        h.u.headers = headers.get();
      }
      auto& f = vus.emplace_back();
      f.vtype = RD_KAFKA_VTYPE_MSGFLAGS;
      // Without MSG_F_COPY librdkafka reads key and payload in place until the delivery report:
      // record.owner keeps them alive that long (it is held with the callback in pending_).
      f.u.i = record.owner ? 0 : RD_KAFKA_MSG_F_COPY;
      auto& o = vus.emplace_back();
      o.vtype = RD_KAFKA_VTYPE_OPAQUE;
      o.u.ptr = to_opaque(id);

      // Registered before producing: the callback is owned here, keyed by the opaque id, so it
      // is freed whatever happens (failed produce, purge, destruction).
      pending_.emplace(id, Pending{std::move(callback), record.owner});
      detail::ErrorPtr error(rd_kafka_produceva(rk_.get(), vus.data(), vus.size()));
      if (!error) {
        headers.release();  // now owned by the queued message
        return;
      }
      callback = std::move(pending_.at(id).callback);
      pending_.erase(id);
      if (rd_kafka_error_code(error.get()) == RD_KAFKA_RESP_ERR__QUEUE_FULL &&
          std::chrono::steady_clock::now() < deadline) {
        rd_kafka_poll(rk_.get(), to_poll_ms(kQueueFullPoll));
        continue;
      }
      check_error(std::move(error), context);
    }
  }

  int poll(std::chrono::milliseconds timeout) {
    const int served = rd_kafka_poll(rk_.get(), to_poll_ms(timeout));
    guard_.rethrow_pending();
    return served;
  }

  bool flush(std::chrono::milliseconds timeout) {
    const rd_kafka_resp_err_t err = rd_kafka_flush(rk_.get(), to_poll_ms(timeout));
    guard_.rethrow_pending();
    if (err == RD_KAFKA_RESP_ERR__TIMED_OUT) return false;
    check_error(err, "kafka producer: flush", rk_.get());
    return pending_.empty();
  }

  std::size_t in_flight() const noexcept { return pending_.size(); }

  bool create_topic(const std::string& topic, int partitions, int replication_factor,
                    const std::map<std::string, std::string>& configs, std::chrono::milliseconds timeout) {
    const std::string context = "kafka producer: create topic " + topic + " (" + std::to_string(partitions) +
                                " partitions, replication " + std::to_string(replication_factor) + ")";
    std::array<char, 512> errstr{};
    detail::NewTopicPtr new_topic(
        rd_kafka_NewTopic_new(topic.c_str(), partitions, replication_factor, errstr.data(), errstr.size()));
    if (!new_topic) throw std::invalid_argument(context + ": " + errstr.data());
    for (const auto& [key, value] : configs) {
      check_error(rd_kafka_NewTopic_set_config(new_topic.get(), key.c_str(), value.c_str()),
                  context + ": config " + key, rk_.get());
    }
    detail::AdminOptionsPtr admin_options(rd_kafka_AdminOptions_new(rk_.get(), RD_KAFKA_ADMIN_OP_CREATETOPICS));
    check_error(rd_kafka_AdminOptions_set_request_timeout(admin_options.get(), to_poll_ms(timeout), errstr.data(),
                                                          errstr.size()),
                context + ": request timeout", rk_.get());
    check_error(rd_kafka_AdminOptions_set_operation_timeout(admin_options.get(), to_poll_ms(timeout), errstr.data(),
                                                            errstr.size()),
                context + ": operation timeout", rk_.get());
    detail::QueuePtr queue(rd_kafka_queue_new(rk_.get()));
    rd_kafka_NewTopic_t* topics[] = {new_topic.get()};
    rd_kafka_CreateTopics(rk_.get(), topics, 1, admin_options.get(), queue.get());
    // The admin request enforces `timeout` itself; the extra second only covers the reply's trip.
    detail::EventPtr event(rd_kafka_queue_poll(queue.get(), to_poll_ms(timeout + 1s)));
    if (!event) check_error(RD_KAFKA_RESP_ERR__TIMED_OUT, context, rk_.get());
    check_error(rd_kafka_event_error(event.get()), context, rk_.get());
    const rd_kafka_CreateTopics_result_t* result = rd_kafka_event_CreateTopics_result(event.get());
    std::size_t count = 0;
    const rd_kafka_topic_result_t** results = rd_kafka_CreateTopics_result_topics(result, &count);
    for (std::size_t i = 0; i < count; ++i) {
      const rd_kafka_resp_err_t err = rd_kafka_topic_result_error(results[i]);
      if (err == RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS) return false;
      const char* message = rd_kafka_topic_result_error_string(results[i]);
      check_error(err, context + (message != nullptr ? std::string(": ") + message : std::string()), rk_.get());
    }
    return true;
  }

 private:
  static Impl& self(void* opaque) { return *static_cast<Impl*>(opaque); }

  static void on_delivery(rd_kafka_t*, const rd_kafka_message_t* msg, void* opaque) {
    Impl& impl = self(opaque);
    const auto it = impl.pending_.find(from_opaque(msg->_private));
    if (it == impl.pending_.end()) return;
    // Moved out, not erased with the entry: the owner outlives the callback (librdkafka frees
    // the message, which points into it, only once this function has returned).
    Pending pending = std::move(it->second);
    impl.pending_.erase(it);
    if (impl.destroying_ || !pending.callback) return;
    DeliveryReport report;
    report.delivered = msg->err == RD_KAFKA_RESP_ERR_NO_ERROR;
    if (!report.delivered) {
      report.error = std::string(rd_kafka_err2name(msg->err)) + ": " + rd_kafka_err2str(msg->err);
      report.error_code = msg->err;
    }
    if (msg->rkt != nullptr) report.topic = rd_kafka_topic_name(msg->rkt);
    report.partition = msg->partition;
    report.offset = msg->offset;
    impl.guard_.guarded("delivery callback", [&] { pending.callback(report); });
  }

  static void on_error(rd_kafka_t* rk, int err_code, const char* reason, void* opaque) {
    Impl& impl = self(opaque);
    const auto err = static_cast<rd_kafka_resp_err_t>(err_code);
    if (err == RD_KAFKA_RESP_ERR__FATAL) {
      impl.guard_.guarded("fatal error", [&] { check_error(err, "kafka producer: fatal error", rk); });
      return;
    }
    if (impl.security_.on_error(err, reason)) return;  // TLS/SASL, or anything during the startup check
    if (const auto suppressed = impl.error_log_.admit(rd_kafka_err2name(err))) {
      if (*suppressed > 0) {
        spdlog::warn("kafka producer: {}: {} ({} similar suppressed)", rd_kafka_err2name(err), reason, *suppressed);
      } else {
        spdlog::warn("kafka producer: {}: {}", rd_kafka_err2name(err), reason);
      }
    }
  }

  // A produced message's callback and, for a record produced without a copy, the owner of the
  // bytes librdkafka reads in place.
  struct Pending {
    DeliveryCallback callback;
    std::shared_ptr<const void> owner;
  };

  KafkaProducerOptions options_;
  // Outlives rk_ (declared before it): owners stay alive while librdkafka tears down.
  std::unordered_map<std::uint64_t, Pending> pending_;
  std::uint64_t next_id_ = 1;
  CallbackGuard guard_{"kafka producer"};
  support::RateLimitedLog error_log_{detail::kErrorLogInterval};
  bool destroying_ = false;
  detail::SecurityWatch security_{std::string(kProducerWhat), options_.properties, options_.on_security_error, guard_};
  // Last member: destroyed first, while pending_ still exists for any report served on the way.
  detail::KafkaPtr rk_;
};

KafkaProducer::KafkaProducer(KafkaProducerOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
KafkaProducer::~KafkaProducer() = default;

void KafkaProducer::produce(const ProducerRecord& record, DeliveryCallback on_delivery) {
  impl_->produce(record, std::move(on_delivery));
}
int KafkaProducer::poll(std::chrono::milliseconds timeout) { return impl_->poll(timeout); }
bool KafkaProducer::flush(std::chrono::milliseconds timeout) { return impl_->flush(timeout); }
std::size_t KafkaProducer::in_flight() const noexcept { return impl_->in_flight(); }

bool KafkaProducer::create_topic(const std::string& topic, int partitions, int replication_factor,
                                 const std::map<std::string, std::string>& configs, std::chrono::milliseconds timeout) {
  return impl_->create_topic(topic, partitions, replication_factor, configs, timeout);
}

}  // namespace hbingest::connectors
