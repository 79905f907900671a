#include "hbingest/metrics/registry.h"

#include <stdexcept>

namespace hbingest::metrics {

template <class T>
Family<T>& Registry::family(const std::string& name, const std::string& help, std::vector<double> buckets) {
  if (!detail::valid_metric_name(name)) throw std::invalid_argument("invalid metric name '" + name + "'");
  if constexpr (std::same_as<T, Counter>) {
    // promtool and Prometheus conventions: a counter's exposed name ends in _total.
    if (!name.ends_with("_total")) throw std::invalid_argument("counter name '" + name + "' must end in _total");
  }
  if (help.empty()) throw std::invalid_argument("metric '" + name + "' needs a help text");
  std::lock_guard lock(mutex_);
  for (const auto& existing : families_) {
    if (existing->name() != name) continue;
    auto* same = dynamic_cast<Family<T>*>(existing.get());
    if (same == nullptr || same->help() != help || same->buckets() != buckets) {
      throw std::invalid_argument("metric '" + name + "' is already registered with another type, help or buckets");
    }
    return *same;
  }
  auto created = std::make_unique<Family<T>>(name, help, std::move(buckets));
  Family<T>& ref = *created;
  families_.push_back(std::move(created));
  return ref;
}

Family<Counter>& Registry::counter_family(const std::string& name, const std::string& help) {
  return family<Counter>(name, help, {});
}

Family<Gauge>& Registry::gauge_family(const std::string& name, const std::string& help) {
  return family<Gauge>(name, help, {});
}

Family<Histogram>& Registry::histogram_family(const std::string& name, const std::string& help,
                                              std::vector<double> buckets) {
  return family<Histogram>(name, help, std::move(buckets));
}

std::string Registry::serialize() const {
  std::string out;
  std::lock_guard lock(mutex_);
  for (const auto& family : families_) family->serialize(out);
  return out;
}

}  // namespace hbingest::metrics
