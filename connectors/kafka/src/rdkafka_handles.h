#pragma once
// Private to hbingest::kafka: each librdkafka handle wrapped once, and the one error choke point.

#include <librdkafka/rdkafka.h>

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "hbingest/connectors/source.h"

namespace hbingest::connectors::detail {

struct KafkaDeleter {
  void operator()(rd_kafka_t* p) const noexcept { rd_kafka_destroy(p); }
  void operator()(rd_kafka_conf_t* p) const noexcept { rd_kafka_conf_destroy(p); }
  void operator()(rd_kafka_topic_partition_list_t* p) const noexcept { rd_kafka_topic_partition_list_destroy(p); }
  void operator()(rd_kafka_message_t* p) const noexcept { rd_kafka_message_destroy(p); }
  void operator()(rd_kafka_headers_t* p) const noexcept { rd_kafka_headers_destroy(p); }
  void operator()(rd_kafka_error_t* p) const noexcept { rd_kafka_error_destroy(p); }
  void operator()(rd_kafka_queue_t* p) const noexcept { rd_kafka_queue_destroy(p); }
  void operator()(rd_kafka_event_t* p) const noexcept { rd_kafka_event_destroy(p); }
  void operator()(rd_kafka_NewTopic_t* p) const noexcept { rd_kafka_NewTopic_destroy(p); }
  void operator()(rd_kafka_AdminOptions_t* p) const noexcept { rd_kafka_AdminOptions_destroy(p); }
};

using KafkaPtr = std::unique_ptr<rd_kafka_t, KafkaDeleter>;
using ConfPtr = std::unique_ptr<rd_kafka_conf_t, KafkaDeleter>;
using PartitionListPtr = std::unique_ptr<rd_kafka_topic_partition_list_t, KafkaDeleter>;
using MessagePtr = std::unique_ptr<rd_kafka_message_t, KafkaDeleter>;
using HeadersPtr = std::unique_ptr<rd_kafka_headers_t, KafkaDeleter>;
using ErrorPtr = std::unique_ptr<rd_kafka_error_t, KafkaDeleter>;
using QueuePtr = std::unique_ptr<rd_kafka_queue_t, KafkaDeleter>;
using EventPtr = std::unique_ptr<rd_kafka_event_t, KafkaDeleter>;
using NewTopicPtr = std::unique_ptr<rd_kafka_NewTopic_t, KafkaDeleter>;
using AdminOptionsPtr = std::unique_ptr<rd_kafka_AdminOptions_t, KafkaDeleter>;

// Throws KafkaError when `err` is not NO_ERROR. With `rk`, a _FATAL code is replaced by the
// underlying fatal error so the message says what actually went wrong.
void check_error(rd_kafka_resp_err_t err, std::string_view context, rd_kafka_t* rk = nullptr);
// Same for the rd_kafka_error_t API (takes ownership; null means success).
void check_error(ErrorPtr error, std::string_view context);
// Errors that may succeed when retried (transport, coordinator moves, leader elections).
bool is_retriable(rd_kafka_resp_err_t err) noexcept;

// Applies one property; a rejected key or value throws std::invalid_argument naming `what`
// (e.g. "kafka consumer"), the key and librdkafka's reason.
void set_property(rd_kafka_conf_t* conf, const std::string& key, const std::string& value, std::string_view what);

// librdkafka's own log lines go to spdlog (they are emitted from librdkafka's threads).
void route_logs_to_spdlog(rd_kafka_conf_t* conf);
// How often a client logs librdkafka's repeated errors (the others are counted, not logged).
inline constexpr std::chrono::seconds kErrorLogInterval{10};

// A timeout as the int milliseconds librdkafka takes, clamped to [0, INT_MAX].
int to_poll_ms(std::chrono::milliseconds timeout);

PartitionListPtr to_partition_list(const std::vector<TopicPartition>& partitions);
PartitionListPtr to_partition_list(const std::vector<PartitionOffset>& offsets);
std::vector<TopicPartition> from_partition_list(const rd_kafka_topic_partition_list_t* list);
// The partitions with their offsets (empty for nullptr).
std::vector<PartitionOffset> offsets_from_partition_list(const rd_kafka_topic_partition_list_t* list);

}  // namespace hbingest::connectors::detail
