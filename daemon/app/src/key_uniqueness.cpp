#include "hbingest/app/key_uniqueness.h"

#include <algorithm>

namespace hbingest::app {

namespace {

bool stores(const keyspec::ComponentInfo& c, std::string_view input) {
  // A salt or a time bucket reads its inputs but keeps only a bucket number of them.
  if (c.type == "salt" || c.type == "bucket") return false;
  return c.source.find(input) != std::string::npos;
}

bool any_stores(const keyspec::KeySpec& spec, std::string_view input) {
  const auto& components = spec.components();
  return std::any_of(components.begin(), components.end(),
                     [&](const keyspec::ComponentInfo& c) { return stores(c, input); });
}

std::string subscription(const config::KafkaConfig& kafka) {
  std::string out;
  for (const auto& topic : kafka.topics) out.append(out.empty() ? "" : ", ").append(topic);
  return out;
}

}  // namespace

KeyUniqueness check_key_uniqueness(const config::Config& config, const keyspec::KeySpec& spec, std::string_view name) {
  KeyUniqueness out;
  const bool per_record = any_stores(spec, "kafka:partition") && any_stores(spec, "kafka:offset");
  if (!per_record) {
    out.warnings.push_back(std::string(name) +
                           ".key: the key does not contain kafka:partition and kafka:offset, so it is not unique per "
                           "Kafka record: events with equal key components share one row and the later one "
                           "overwrites the earlier (intended for latest-per-entity tables)");
    return out;
  }
  const auto& topics = config.kafka.topics;
  const bool many_topics = topics.size() > 1 || std::any_of(topics.begin(), topics.end(), [](const std::string& t) {
                             return !t.empty() && t.front() == '^';
                           });
  if (many_topics && !any_stores(spec, "kafka:topic")) {
    out.problems.push_back(
        std::string(name) +
        ".key: the key identifies a record by kafka:partition and kafka:offset but not by its topic, and "
        "kafka.topics (" +
        subscription(config.kafka) +
        ") can deliver several topics: records at the same partition and offset of two topics, with the same key "
        "fields, would write one row and lose the other. Use `preset: events_by_topic` (the events key with a "
        "4-byte hash of the topic before the partition), add a component reading kafka:topic, or subscribe to one "
        "topic");
  }
  return out;
}

}  // namespace hbingest::app
