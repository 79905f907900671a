#pragma once
// The one exception type the Kafka connector throws for librdkafka failures. Configuration
// mistakes (an unknown property, a bad value) are std::invalid_argument naming the key instead.

#include <stdexcept>
#include <string>

namespace hbingest::connectors {

class KafkaError : public std::runtime_error {
 public:
  // `code` is the rd_kafka_resp_err_t value (an int so that librdkafka stays out of this header);
  // `message` already carries the context (operation, topic/partition/offset).
  KafkaError(int code, std::string code_name, bool fatal, bool retriable, const std::string& message)
      : std::runtime_error(message),
        code_(code),
        code_name_(std::move(code_name)),
        fatal_(fatal),
        retriable_(retriable) {}

  int code() const noexcept { return code_; }
  // librdkafka's symbolic name, e.g. "_TRANSPORT" or "UNKNOWN_TOPIC_OR_PART".
  const std::string& code_name() const noexcept { return code_name_; }
  // The client instance is unusable and must be recreated.
  bool fatal() const noexcept { return fatal_; }
  // The same operation may succeed if repeated later.
  bool retriable() const noexcept { return retriable_; }

 private:
  int code_;
  std::string code_name_;
  bool fatal_;
  bool retriable_;
};

}  // namespace hbingest::connectors
