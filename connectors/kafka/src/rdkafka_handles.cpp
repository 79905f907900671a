#include "rdkafka_handles.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <climits>
#include <stdexcept>

#include "hbingest/connectors/kafka_error.h"
#include "hbingest/support/secrets.h"

namespace hbingest::connectors::detail {

bool is_retriable(rd_kafka_resp_err_t err) noexcept {
  switch (err) {
    case RD_KAFKA_RESP_ERR__TRANSPORT:
    case RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN:
    case RD_KAFKA_RESP_ERR__TIMED_OUT:
    case RD_KAFKA_RESP_ERR__QUEUE_FULL:
    case RD_KAFKA_RESP_ERR__WAIT_COORD:
    case RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT:
    case RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_NOT_COORDINATOR:
    case RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS:
    case RD_KAFKA_RESP_ERR_REBALANCE_IN_PROGRESS:
    case RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE:
    case RD_KAFKA_RESP_ERR_NOT_LEADER_FOR_PARTITION:
    case RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS:
    case RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND:
    case RD_KAFKA_RESP_ERR_NETWORK_EXCEPTION:
      return true;
    default:
      return false;
  }
}

void check_error(rd_kafka_resp_err_t err, std::string_view context, rd_kafka_t* rk) {
  if (err == RD_KAFKA_RESP_ERR_NO_ERROR) return;
  bool fatal = false;
  std::string reason = rd_kafka_err2str(err);
  if (err == RD_KAFKA_RESP_ERR__FATAL && rk != nullptr) {
    std::array<char, 512> buf{};
    const rd_kafka_resp_err_t underlying = rd_kafka_fatal_error(rk, buf.data(), buf.size());
    if (underlying != RD_KAFKA_RESP_ERR_NO_ERROR) {
      err = underlying;
      reason = buf.data();
    }
    fatal = true;
  }
  throw KafkaError(static_cast<int>(err), rd_kafka_err2name(err), fatal, !fatal && is_retriable(err),
                   std::string(context) + ": " + reason + " (" + rd_kafka_err2name(err) + ")");
}

void check_error(ErrorPtr error, std::string_view context) {
  if (!error) return;
  const rd_kafka_resp_err_t err = rd_kafka_error_code(error.get());
  throw KafkaError(
      static_cast<int>(err), rd_kafka_error_name(error.get()), rd_kafka_error_is_fatal(error.get()) != 0,
      rd_kafka_error_is_retriable(error.get()) != 0,
      std::string(context) + ": " + rd_kafka_error_string(error.get()) + " (" + rd_kafka_error_name(error.get()) + ")");
}

void set_property(rd_kafka_conf_t* conf, const std::string& key, const std::string& value, std::string_view what) {
  std::array<char, 512> errstr{};
  if (rd_kafka_conf_set(conf, key.c_str(), value.c_str(), errstr.data(), errstr.size()) != RD_KAFKA_CONF_OK) {
    // librdkafka's reason quotes the value ("Invalid value \"...\" for ..."): never a secret one.
    const std::string reason =
        support::is_secret_key(key) ? support::scrub(errstr.data(), {value}) : std::string(errstr.data());
    throw std::invalid_argument(std::string(what) + ": property '" + key + "': " + reason);
  }
}

namespace {

void log_from_librdkafka(const rd_kafka_t* rk, int level, const char* facility, const char* message) {
  // Runs on librdkafka's internal threads; spdlog's default logger is thread-safe.
  const char* name = rk != nullptr ? rd_kafka_name(rk) : "rdkafka";
  const auto spd_level = level <= 2   ? spdlog::level::critical
                         : level == 3 ? spdlog::level::err
                         : level == 4 ? spdlog::level::warn
                         : level <= 6 ? spdlog::level::info
                                      : spdlog::level::debug;
  spdlog::log(spd_level, "{} {}: {}", name, facility, message);
}

}  // namespace

void route_logs_to_spdlog(rd_kafka_conf_t* conf) { rd_kafka_conf_set_log_cb(conf, &log_from_librdkafka); }

int to_poll_ms(std::chrono::milliseconds timeout) {
  return static_cast<int>(std::clamp<std::chrono::milliseconds::rep>(timeout.count(), 0, INT_MAX));
}

PartitionListPtr to_partition_list(const std::vector<TopicPartition>& partitions) {
  PartitionListPtr list(rd_kafka_topic_partition_list_new(static_cast<int>(partitions.size())));
  for (const auto& tp : partitions) rd_kafka_topic_partition_list_add(list.get(), tp.topic.c_str(), tp.partition);
  return list;
}

PartitionListPtr to_partition_list(const std::vector<PartitionOffset>& offsets) {
  PartitionListPtr list(rd_kafka_topic_partition_list_new(static_cast<int>(offsets.size())));
  for (const auto& po : offsets) {
    rd_kafka_topic_partition_list_add(list.get(), po.tp.topic.c_str(), po.tp.partition)->offset = po.offset;
  }
  return list;
}

std::vector<TopicPartition> from_partition_list(const rd_kafka_topic_partition_list_t* list) {
  std::vector<TopicPartition> out;
  if (list == nullptr) return out;
  out.reserve(static_cast<std::size_t>(list->cnt));
  for (int i = 0; i < list->cnt; ++i) out.push_back({list->elems[i].topic, list->elems[i].partition});
  return out;
}

std::vector<PartitionOffset> offsets_from_partition_list(const rd_kafka_topic_partition_list_t* list) {
  std::vector<PartitionOffset> out;
  if (list == nullptr) return out;
  out.reserve(static_cast<std::size_t>(list->cnt));
  for (int i = 0; i < list->cnt; ++i) {
    out.push_back({{list->elems[i].topic, list->elems[i].partition}, list->elems[i].offset});
  }
  return out;
}

}  // namespace hbingest::connectors::detail
