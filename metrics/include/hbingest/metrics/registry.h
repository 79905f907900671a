#pragma once
// The process's metric registry, serialized for GET /metrics.
//
//   Registry registry;
//   auto& rows = registry.counter_family("hbingest_rows_written_total", "Rows HBase acknowledged.");
//   Counter& login_rows = rows.add({{"table", "events"}});   // keep the reference
//   login_rows.increment(batch.size());                       // hot path: one atomic add
//
// Thread safety: every method may be called concurrently. Ownership: the registry owns its
// families; references it returns stay valid for its lifetime.

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "hbingest/metrics/family.h"

namespace hbingest::metrics {

class Registry {
 public:
  Registry() = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Registering an existing name again returns the same family if type, help (and buckets)
  // match. Throws std::invalid_argument for an invalid name, a counter name not ending in
  // "_total", or a conflicting re-registration.
  Family<Counter>& counter_family(const std::string& name, const std::string& help);
  Family<Gauge>& gauge_family(const std::string& name, const std::string& help);
  Family<Histogram>& histogram_family(const std::string& name, const std::string& help, std::vector<double> buckets);

  // Every non-empty family in registration order, in Prometheus text format 0.0.4
  // (Content-Type: kContentType).
  std::string serialize() const;

  static constexpr const char* kContentType = "text/plain; version=0.0.4; charset=utf-8";

 private:
  template <class T>
  Family<T>& family(const std::string& name, const std::string& help, std::vector<double> buckets);

  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<FamilyBase>> families_;
};

}  // namespace hbingest::metrics
