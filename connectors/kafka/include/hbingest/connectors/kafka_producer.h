#pragma once
// The one wrapping of a librdkafka producer, shared by the dead-letter sink and `hbingest gen`.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace hbingest::connectors {

struct KafkaProducerOptions {
  std::string bootstrap_servers;  // overrides a "bootstrap.servers" property when not empty
  // Passed verbatim to rd_kafka_conf_set after our defaults (acks=all, enable.idempotence=true,
  // message.max.bytes=10 MiB), so they can be overridden; a rejected key or value throws
  // std::invalid_argument naming the key.
  std::map<std::string, std::string> properties;
  // How long produce() keeps serving delivery reports and retrying while the local queue is full.
  std::chrono::milliseconds queue_full_timeout{30000};
  // As in KafkaSourceOptions: above zero, the constructor waits up to this long for a broker to
  // answer and throws KafkaError naming the cause on a TLS or SASL failure.
  std::chrono::milliseconds startup_check_timeout{0};
  // As in KafkaSourceOptions: each TLS or SASL failure after the constructor returned, from poll()
  // or flush() on the producing thread.
  std::function<void(const std::string& description)> on_security_error;
};

struct ProducerRecord {
  std::string_view topic;
  std::optional<std::string_view> key;  // nullopt: no key (partitioner picks at random)
  std::string_view payload;             // data() == nullptr: a null value (a tombstone); else bytes, maybe none
  std::vector<std::pair<std::string, std::string>> headers;
  std::int32_t partition = -1;  // -1: the partitioner decides
  // Null: produce() copies key and payload. Otherwise they point into memory `owner` keeps alive;
  // librdkafka reads them in place and `owner` is held until the delivery callback has returned
  // (or the message is dropped), so a retried or large record is never copied.
  std::shared_ptr<const void> owner;
};

struct DeliveryReport {
  bool delivered = false;  // true only when the broker acknowledged (per `acks`)
  std::string error;       // empty when delivered
  int error_code = 0;      // the rd_kafka_resp_err_t (an int, as in KafkaError::code()); 0 when delivered
  std::string topic;
  std::int32_t partition = -1;
  std::int64_t offset = -1;
};

// Thread-compatible: one thread produces, polls and flushes; delivery callbacks run on that
// thread from poll(), flush() or a produce() that waits on a full queue. Exceptions thrown by a
// callback are kept and the first is rethrown from the next poll()/flush(). Destruction does not
// flush: messages still queued are dropped and their callbacks never run (call flush() first).
// Neither copyable nor movable.
class KafkaProducer {
 public:
  using DeliveryCallback = std::function<void(const DeliveryReport&)>;

  explicit KafkaProducer(KafkaProducerOptions options);
  ~KafkaProducer();
  KafkaProducer(const KafkaProducer&) = delete;
  KafkaProducer& operator=(const KafkaProducer&) = delete;
  KafkaProducer(KafkaProducer&&) = delete;
  KafkaProducer& operator=(KafkaProducer&&) = delete;

  // Queues the record (copying key and payload unless it has an owner). When it cannot be queued (too large, unknown
  // partition, queue still full after queue_full_timeout, fatal producer error) it throws
  // KafkaError naming the topic, and `on_delivery` is dropped without being called.
  void produce(const ProducerRecord& record, DeliveryCallback on_delivery);
  // Serves delivery reports and errors for up to `timeout`; returns the number of events served.
  int poll(std::chrono::milliseconds timeout);
  // Waits until every queued message is delivered or failed, at most `timeout`. True when drained.
  bool flush(std::chrono::milliseconds timeout);
  // Messages produced whose delivery callback has not run yet.
  std::size_t in_flight() const noexcept;

  // Creates `topic` (admin API) and returns true, or returns false when it already exists.
  // `configs` are topic configs such as {"max.message.bytes", "10485760"}. Throws KafkaError.
  bool create_topic(const std::string& topic, int partitions, int replication_factor,
                    const std::map<std::string, std::string>& configs, std::chrono::milliseconds timeout);

 private:
  class Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hbingest::connectors
