#include "startup_check.h"

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

StartupCheck::StartupCheck(std::string what, std::map<std::string, std::string> properties)
    : what_(std::move(what)), properties_(std::move(properties)) {}

bool StartupCheck::on_error(rd_kafka_resp_err_t err, const char* reason) {
  if (classify_security_error(err, reason != nullptr ? reason : "") == SecurityFailure::none) return false;
  if (!failure_) failure_ = Failure{err, reason != nullptr ? reason : ""};
  return true;
}

std::string StartupCheck::describe(rd_kafka_resp_err_t err, const std::string& reason) const {
  return describe_security_failure(what_, err, reason, properties_);
}

bool StartupCheck::run(rd_kafka_t* rk, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    rd_kafka_poll(rk, 0);  // serves the error callback, which fills failure_
    if (failure_) {
      throw KafkaError(failure_->err, rd_kafka_err2name(failure_->err), false, false,
                       describe(failure_->err, failure_->reason));
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
