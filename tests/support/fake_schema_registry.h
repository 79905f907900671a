#pragma once
// A SchemaRegistry for unit tests: schemas by id and by subject/version from maps, and a switch that
// makes every call fail as an unreachable registry would. Counts the calls. Add schemas before a
// pipeline runs; the switch and the count may be used from any thread meanwhile.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <utility>

#include "hbingest/connectors/schema_registry.h"

namespace hbingest::testing {

class FakeSchemaRegistry final : public connectors::SchemaRegistry {
 public:
  void add(connectors::RegisteredSchema schema) {
    const auto id = schema.id;
    by_id_[id] = std::move(schema);
  }
  void add_version(std::string subject, std::int32_t version, connectors::RegisteredSchema schema) {
    by_subject_[{std::move(subject), version}] = std::move(schema);
  }
  // Answers a subject/version no add_version() gave (set before a pipeline runs).
  void set_subject_fallback(
      std::function<connectors::RegisteredSchema(std::string_view subject, std::int32_t version)> fallback) {
    subject_fallback_ = std::move(fallback);
  }
  void set_unavailable(bool unavailable) { unavailable_ = unavailable; }
  // Each failing call takes this long first, as a registry that times out does.
  void set_failure_delay(std::chrono::milliseconds delay) { failure_delay_ms_ = delay.count(); }
  // Only `id` fails as an unreachable registry would (the others are answered).
  void set_unavailable_id(std::int32_t id, bool unavailable) {
    const std::lock_guard lock(mutex_);
    if (unavailable) {
      unavailable_ids_.insert(id);
    } else {
      unavailable_ids_.erase(id);
    }
  }
  // Calls for `id` wait until release_id(id) (a registry that does not answer, or answers late).
  void block_id(std::int32_t id) {
    const std::lock_guard lock(mutex_);
    blocked_ids_.insert(id);
  }
  void release_id(std::int32_t id) {
    {
      const std::lock_guard lock(mutex_);
      blocked_ids_.erase(id);
    }
    released_.notify_all();
  }
  int calls() const { return calls_; }

  connectors::RegisteredSchema schema_by_id(std::int32_t id) override {
    ++calls_;
    {
      std::unique_lock lock(mutex_);
      released_.wait(lock, [&] { return !blocked_ids_.contains(id); });
    }
    if (unavailable_ || id_unavailable(id)) {
      std::this_thread::sleep_for(std::chrono::milliseconds(failure_delay_ms_.load()));
      throw connectors::SchemaRegistryUnavailable("fake registry: connection refused");
    }
    const auto it = by_id_.find(id);
    if (it == by_id_.end()) throw connectors::SchemaNotFound("fake registry: 404 for id " + std::to_string(id));
    return it->second;
  }
  connectors::RegisteredSchema schema_by_subject_version(std::string_view subject, std::int32_t version) override {
    ++calls_;
    if (unavailable_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(failure_delay_ms_.load()));
      throw connectors::SchemaRegistryUnavailable("fake registry: connection refused");
    }
    const auto it = by_subject_.find({std::string(subject), version});
    if (it == by_subject_.end() && subject_fallback_) return subject_fallback_(subject, version);
    if (it == by_subject_.end()) {
      throw connectors::SchemaNotFound("fake registry: 404 for subject " + std::string(subject) + " version " +
                                       std::to_string(version));
    }
    return it->second;
  }
  std::string describe() const override { return "fake://registry"; }

 private:
  bool id_unavailable(std::int32_t id) const {
    const std::lock_guard lock(mutex_);
    return unavailable_ids_.contains(id);
  }

  mutable std::mutex mutex_;
  std::condition_variable released_;
  std::set<std::int32_t> unavailable_ids_;
  std::set<std::int32_t> blocked_ids_;
  std::map<std::int32_t, connectors::RegisteredSchema> by_id_;
  std::map<std::pair<std::string, std::int32_t>, connectors::RegisteredSchema> by_subject_;
  std::function<connectors::RegisteredSchema(std::string_view, std::int32_t)> subject_fallback_;
  std::atomic<bool> unavailable_{false};
  std::atomic<int> calls_{0};
  std::atomic<std::int64_t> failure_delay_ms_{0};
};

// The Confluent frame: magic 0, the id big-endian, then `rest` (message indexes and payload).
inline std::string confluent_framed(std::int32_t id, std::string_view rest) {
  std::string out(1, '\0');
  for (int shift = 24; shift >= 0; shift -= 8)
    out += static_cast<char>((static_cast<std::uint32_t>(id) >> shift) & 0xFF);
  out += rest;
  return out;
}

}  // namespace hbingest::testing
