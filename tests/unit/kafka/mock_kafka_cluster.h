#pragma once
// An in-process Kafka cluster for unit tests: librdkafka's mock brokers (rdkafka_mock.h) listen
// on loopback ports, so KafkaSource runs its real consumer-group, commit and close paths with no
// external service. The cluster belongs to a producer handle, which also writes the test records;
// it must outlive every client connected to it (declare it first).

#include <librdkafka/rdkafka.h>
#include <librdkafka/rdkafka_mock.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace hbingest::testing {

class MockKafkaCluster {
 public:
  explicit MockKafkaCluster(int brokers = 1) {
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    std::array<char, 512> error{};
    // With this property rd_kafka_new() starts the mock brokers and points the producer at them.
    if (rd_kafka_conf_set(conf, "test.mock.num.brokers", std::to_string(brokers).c_str(), error.data(), error.size()) !=
        RD_KAFKA_CONF_OK) {
      rd_kafka_conf_destroy(conf);
      throw std::runtime_error(std::string("mock cluster: ") + error.data());
    }
    rd_kafka_conf_set_dr_msg_cb(conf, &on_delivery);
    producer_.reset(rd_kafka_new(RD_KAFKA_PRODUCER, conf, error.data(), error.size()));
    if (!producer_) {
      rd_kafka_conf_destroy(conf);
      throw std::runtime_error(std::string("mock cluster: ") + error.data());
    }
    cluster_ = rd_kafka_handle_mock_cluster(producer_.get());
    if (cluster_ == nullptr) throw std::runtime_error("mock cluster: librdkafka did not create one");
  }

  std::string bootstrap_servers() const { return rd_kafka_mock_cluster_bootstraps(cluster_); }
  // The group's committed next-offset of topic/partition (-1001 when none), read by a consumer
  // that never joins the group: a subscribing reader would start a rebalance of its own, and its
  // OffsetFetch could wait behind that join on a loaded machine. Retries timeouts until `budget`.
  std::int64_t committed_offset(const std::string& group, const std::string& topic, std::int32_t partition,
                                std::chrono::milliseconds budget = std::chrono::seconds(60)) const {
    const auto reader = consumer({{"group.id", group}});
    std::unique_ptr<rd_kafka_topic_partition_list_t, DestroyList> list(rd_kafka_topic_partition_list_new(1));
    rd_kafka_topic_partition_list_add(list.get(), topic.c_str(), partition);
    const auto deadline = std::chrono::steady_clock::now() + budget;
    rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR__TIMED_OUT;
    while (err == RD_KAFKA_RESP_ERR__TIMED_OUT && std::chrono::steady_clock::now() < deadline) {
      err = rd_kafka_committed(reader.get(), list.get(), 5000);
    }
    check(err, "read committed offset of " + topic + "/" + std::to_string(partition) + " for group " + group);
    check(list->elems[0].err, "committed offset of " + topic + "/" + std::to_string(partition));
    const std::int64_t offset = list->elems[0].offset;
    rd_kafka_consumer_close(reader.get());
    return offset;
  }

  struct Record {
    std::optional<std::string> key;
    std::string value;
    std::map<std::string, std::string> headers;
  };
  // The first `count` records of topic/partition (fewer when `budget` runs out), read by a
  // consumer that assigns the partition itself (no group).
  std::vector<Record> read(const std::string& topic, std::int32_t partition, std::size_t count,
                           std::chrono::milliseconds budget = std::chrono::seconds(30)) const {
    const auto reader = consumer({{"group.id", "mock-cluster-reader"}, {"fetch.message.max.bytes", "20000000"}});
    std::unique_ptr<rd_kafka_topic_partition_list_t, DestroyList> list(rd_kafka_topic_partition_list_new(1));
    rd_kafka_topic_partition_list_add(list.get(), topic.c_str(), partition)->offset = RD_KAFKA_OFFSET_BEGINNING;
    check(rd_kafka_assign(reader.get(), list.get()), "assign " + topic);
    std::vector<Record> records;
    const auto deadline = std::chrono::steady_clock::now() + budget;
    while (records.size() < count && std::chrono::steady_clock::now() < deadline) {
      std::unique_ptr<rd_kafka_message_t, DestroyMessage> message(rd_kafka_consumer_poll(reader.get(), 100));
      if (!message || message->err != RD_KAFKA_RESP_ERR_NO_ERROR) continue;
      Record record;
      if (message->key != nullptr) record.key.emplace(static_cast<const char*>(message->key), message->key_len);
      if (message->payload != nullptr) record.value.assign(static_cast<const char*>(message->payload), message->len);
      rd_kafka_headers_t* headers = nullptr;
      if (rd_kafka_message_headers(message.get(), &headers) == RD_KAFKA_RESP_ERR_NO_ERROR) {
        const char* name = nullptr;
        const void* value = nullptr;
        std::size_t size = 0;
        for (std::size_t i = 0; rd_kafka_header_get_all(headers, i, &name, &value, &size) == RD_KAFKA_RESP_ERR_NO_ERROR;
             ++i) {
          record.headers[name] = value == nullptr ? std::string() : std::string(static_cast<const char*>(value), size);
        }
      }
      records.push_back(std::move(record));
    }
    rd_kafka_consumer_close(reader.get());
    return records;
  }

  // For rd_kafka_mock_* calls a test makes itself (injected request errors, ...).
  rd_kafka_mock_cluster_t* get() const noexcept { return cluster_; }

  void create_topic(const std::string& topic, int partitions) {
    check(rd_kafka_mock_topic_create(cluster_, topic.c_str(), partitions, 1), "create topic " + topic);
  }

  // Produces one record and waits for the broker's acknowledgement.
  void produce(const std::string& topic, std::int32_t partition, const std::string& value) {
    rd_kafka_resp_err_t delivery = RD_KAFKA_RESP_ERR__IN_PROGRESS;
    // rd_kafka_produceva, not producev: the RD_KAFKA_V_* macros are GNU statement expressions.
    std::array<rd_kafka_vu_t, 5> fields{};
    fields[0].vtype = RD_KAFKA_VTYPE_TOPIC;
    fields[0].u.cstr = topic.c_str();
    fields[1].vtype = RD_KAFKA_VTYPE_PARTITION;
    fields[1].u.i32 = partition;
    fields[2].vtype = RD_KAFKA_VTYPE_VALUE;
    fields[2].u.mem = {const_cast<char*>(value.data()), value.size()};
    fields[3].vtype = RD_KAFKA_VTYPE_MSGFLAGS;
    fields[3].u.i = RD_KAFKA_MSG_F_COPY;
    fields[4].vtype = RD_KAFKA_VTYPE_OPAQUE;
    fields[4].u.ptr = &delivery;
    rd_kafka_error_t* error = rd_kafka_produceva(producer_.get(), fields.data(), fields.size());
    if (error != nullptr) {
      const rd_kafka_resp_err_t code = rd_kafka_error_code(error);
      rd_kafka_error_destroy(error);
      check(code, "produce to " + topic);
    }
    check(rd_kafka_flush(producer_.get(), static_cast<int>(kProduceTimeout.count())), "flush to " + topic);
    check(delivery, "deliver to " + topic);
  }

 private:
  static constexpr std::chrono::milliseconds kProduceTimeout{10000};

  struct Destroy {
    void operator()(rd_kafka_t* rk) const { rd_kafka_destroy(rk); }
  };
  struct DestroyList {
    void operator()(rd_kafka_topic_partition_list_t* list) const { rd_kafka_topic_partition_list_destroy(list); }
  };
  struct DestroyMessage {
    void operator()(rd_kafka_message_t* message) const { rd_kafka_message_destroy(message); }
  };

  // A consumer of this cluster with `settings` on top of bootstrap.servers. It joins no group
  // unless it subscribes, which the readers above never do (they assign, or fetch offsets).
  std::unique_ptr<rd_kafka_t, Destroy> consumer(
      std::initializer_list<std::pair<const char*, std::string>> settings) const {
    rd_kafka_conf_t* conf = rd_kafka_conf_new();
    std::array<char, 512> error{};
    const auto set = [&](const char* key, const std::string& value) {
      if (rd_kafka_conf_set(conf, key, value.c_str(), error.data(), error.size()) != RD_KAFKA_CONF_OK) {
        rd_kafka_conf_destroy(conf);
        throw std::runtime_error(std::string("mock cluster reader: ") + error.data());
      }
    };
    set("bootstrap.servers", bootstrap_servers());
    for (const auto& [key, value] : settings) set(key, value);
    std::unique_ptr<rd_kafka_t, Destroy> reader(rd_kafka_new(RD_KAFKA_CONSUMER, conf, error.data(), error.size()));
    if (!reader) {
      rd_kafka_conf_destroy(conf);
      throw std::runtime_error(std::string("mock cluster reader: ") + error.data());
    }
    return reader;
  }

  static void on_delivery(rd_kafka_t*, const rd_kafka_message_t* message, void*) {
    *static_cast<rd_kafka_resp_err_t*>(message->_private) = message->err;
  }

  static void check(rd_kafka_resp_err_t err, const std::string& what) {
    if (err != RD_KAFKA_RESP_ERR_NO_ERROR) {
      throw std::runtime_error("mock cluster: " + what + ": " + rd_kafka_err2str(err));
    }
  }

  std::unique_ptr<rd_kafka_t, Destroy> producer_;
  rd_kafka_mock_cluster_t* cluster_ = nullptr;  // owned by producer_
};

}  // namespace hbingest::testing
