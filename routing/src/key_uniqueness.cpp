#include "hbingest/routing/key_uniqueness.h"

#include <algorithm>

namespace hbingest::routing {

namespace {

// A hash of k bytes has 2^(8k) values, so records that share the rest of the key start colliding
// (birthday bound) after about 2^(4k) of them: 16 for 1 byte, 256 for 2, 65,536 for 4. From xxh64's whole digest (8
// bytes) on, that takes ~4 billion records with equal other components, which no retention holds.
constexpr std::size_t kMinIdentifyingHashBytes = 8;

bool reads(const keyspec::ComponentInfo& c, std::string_view input) {
  return c.source.find(input) != std::string::npos;
}

bool short_hash(const keyspec::ComponentInfo& c) {
  return c.type == "hash" && c.width.value_or(0) < kMinIdentifyingHashBytes;
}

// Whether the component's bytes tell apart the values of `input` it will see. A salt or a time
// bucket reads its inputs but keeps only a bucket number of them. A short hash is enough for the
// few topics of a subscription (events_by_topic keeps 4 bytes), not for the records' positions.
bool stores(const keyspec::ComponentInfo& c, std::string_view input) {
  if (c.type == "salt" || c.type == "bucket") return false;
  if (input != "kafka:topic" && short_hash(c)) return false;
  return reads(c, input);
}

const keyspec::ComponentInfo* short_record_hash(const keyspec::KeySpec& spec) {
  for (const auto& c : spec.components()) {
    if (short_hash(c) && (reads(c, "kafka:partition") || reads(c, "kafka:offset"))) return &c;
  }
  return nullptr;
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

KeyUniqueness check_key_uniqueness(const config::Config& config, const std::vector<std::string>& route_topics,
                                   const keyspec::KeySpec& spec, std::string_view name) {
  KeyUniqueness out;
  const bool per_record = any_stores(spec, "kafka:partition") && any_stores(spec, "kafka:offset");
  if (!per_record) {
    if (const auto* hash = short_record_hash(spec)) {
      // Meant to tell records apart (it hashes their position), but too short to: not a
      // latest-per-entity key, a lossy one.
      const std::size_t bytes = hash->width.value_or(0);
      out.problems.push_back(
          std::string(name) + ".key: component '" + hash->name + "' keeps " + std::to_string(bytes) + " byte" +
          (bytes == 1 ? "" : "s") + " of " + hash->source + ", too few to tell Kafka records apart: records with " +
          "equal other key components collide after about 2^" + std::to_string(4 * bytes) +
          " of them, write one row, and the later overwrites the earlier. Keep at least " +
          std::to_string(kMinIdentifyingHashBytes) + " bytes (`bytes: " + std::to_string(kMinIdentifyingHashBytes) +
          "`), or add partition and offset components");
      return out;
    }
    out.warnings.push_back(std::string(name) +
                           ".key: the key does not contain kafka:partition and kafka:offset, so it is not unique per "
                           "Kafka record: events with equal key components share one row and the later one "
                           "overwrites the earlier (intended for latest-per-entity tables)");
    return out;
  }
  // A route that names its topics gets records of those only; else whatever the subscription delivers.
  const auto& topics = route_topics.empty() ? config.kafka.topics : route_topics;
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

}  // namespace hbingest::routing
