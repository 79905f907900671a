#include "security_watch.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include "hbingest/connectors/kafka_error.h"
#include "hbingest/connectors/kafka_security.h"
#include "rdkafka_handles.h"

namespace hbingest::connectors::detail {

namespace {

using namespace std::chrono_literals;

// One metadata request waits at most this long before the error callback is served again, so a
// failed handshake is reported within about this much of happening.
constexpr auto kMetadataSlice = 250ms;

}  // namespace

SecurityWatch::SecurityWatch(std::string what, std::map<std::string, std::string> properties,
                             std::function<void(const std::string&)> on_failure, CallbackGuard& guard)
    : what_(std::move(what)), properties_(std::move(properties)), on_failure_(std::move(on_failure)), guard_(guard) {}

bool SecurityWatch::on_error(rd_kafka_resp_err_t err, const char* reason) {
  const std::string text = reason != nullptr ? reason : "";
  const bool security = classify_security_error(err, text) != SecurityFailure::none;
  if (checking_) {
    if (security && !failure_) failure_ = Failure{err, text};
    return true;
  }
  if (!security) return false;
  const std::string description = describe_security_failure(what_, err, text, properties_);
  if (const auto suppressed = log_.admit(rd_kafka_err2name(err))) {
    spdlog::error("{}{}", description, *suppressed > 0 ? fmt::format(" ({} similar suppressed)", *suppressed) : "");
  }
  if (on_failure_) guard_.guarded("on_security_error", [&] { on_failure_(description); });
  return true;
}

bool SecurityWatch::check_startup(rd_kafka_t* rk, std::chrono::milliseconds timeout) {
  checking_ = true;
  struct Done {
    bool& checking;
    ~Done() { checking = false; }
  } done{checking_};
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    rd_kafka_poll(rk, 0);  // serves the error callback, which fills failure_
    if (failure_) {
      throw KafkaError(failure_->err, rd_kafka_err2name(failure_->err), false, false,
                       describe_security_failure(what_, failure_->err, failure_->reason, properties_));
    }
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    if (left <= 0ms) {
      spdlog::warn("{}: no broker answered within {} ms; starting anyway (librdkafka keeps trying)", what_,
                   timeout.count());
      return false;
    }
    const rd_kafka_metadata_t* metadata = nullptr;
    // all_topics=0 without a topic: only the broker list, which needs an authenticated connection.
    const rd_kafka_resp_err_t err =
        rd_kafka_metadata(rk, 0, nullptr, &metadata, to_poll_ms(std::min(left, kMetadataSlice)));
    if (err == RD_KAFKA_RESP_ERR_NO_ERROR) {
      rd_kafka_metadata_destroy(metadata);
      return true;
    }
    // Anything else (_TIMED_OUT, _TRANSPORT): the error callback says whether it was security.
    if (err != RD_KAFKA_RESP_ERR__TIMED_OUT) rd_kafka_poll(rk, to_poll_ms(std::min(left, kMetadataSlice)));
  }
}

}  // namespace hbingest::connectors::detail
