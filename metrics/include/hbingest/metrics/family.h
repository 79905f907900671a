#pragma once
// A metric family: one name, help and type; one child metric per label set.
//
// Thread safety: add(), remove(), add_callback() and serialize() lock the family's mutex; the
// children they hand out are updated lock-free. Keep the reference from add() instead of calling
// add() per event on the hot path.
// Ownership: the family owns its children; a reference stays valid until remove() of its labels.

#include <concepts>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hbingest/metrics/counter.h"
#include "hbingest/metrics/detail/text_format.h"
#include "hbingest/metrics/gauge.h"
#include "hbingest/metrics/histogram.h"
#include "hbingest/metrics/labels.h"

namespace hbingest::metrics {

class FamilyBase {
 public:
  FamilyBase(std::string name, std::string help) : name_(std::move(name)), help_(std::move(help)) {}
  virtual ~FamilyBase() = default;
  FamilyBase(const FamilyBase&) = delete;
  FamilyBase& operator=(const FamilyBase&) = delete;

  const std::string& name() const noexcept { return name_; }
  const std::string& help() const noexcept { return help_; }
  virtual std::string_view type() const noexcept = 0;
  // Appends the family in text format; nothing when it has no children.
  virtual void serialize(std::string& out) const = 0;

 private:
  std::string name_;
  std::string help_;
};

template <class T>
class Family final : public FamilyBase {
 public:
  // Use Registry::counter_family() & co. `buckets` only for histograms.
  Family(std::string name, std::string help, std::vector<double> buckets = {})
      : FamilyBase(std::move(name), std::move(help)), buckets_(std::move(buckets)) {
    if constexpr (std::same_as<T, Histogram>) Histogram probe(buckets_);  // validates the bounds now
  }

  // The child for `labels`, created on first use; the same object for the same labels.
  // Throws std::invalid_argument for an invalid label name (or "le" on a histogram), or when the
  // labels already carry a callback.
  T& add(const Labels& labels) {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(labels);
    if (it == entries_.end()) {
      detail::validate_labels(name(), labels, std::same_as<T, Histogram>);
      Entry entry{detail::format_labels(labels), make(), {}};
      it = entries_.emplace(labels, std::move(entry)).first;
    }
    if (!it->second.metric) {
      throw std::invalid_argument("metric '" + name() + "': labels {" + it->second.label_text + "} hold a callback");
    }
    return *it->second.metric;
  }

  // A gauge whose value is read from `read` at each scrape (consumer lag, queue sizes). `read`
  // runs on the scraping thread under the family's lock: keep it quick and make it thread-safe.
  // Replaces an earlier callback with the same labels.
  void add_callback(const Labels& labels, std::function<double()> read)
    requires std::same_as<T, Gauge>
  {
    std::lock_guard lock(mutex_);
    detail::validate_labels(name(), labels, false);
    auto it = entries_.find(labels);
    if (it != entries_.end() && it->second.metric) {
      throw std::invalid_argument("metric '" + name() + "': labels {" + it->second.label_text + "} already hold a gauge");
    }
    entries_.insert_or_assign(labels, Entry{detail::format_labels(labels), nullptr, std::move(read)});
  }

  // Drops the child (or callback) for `labels`, e.g. a partition that was revoked. References to
  // it must not be used afterwards.
  void remove(const Labels& labels) {
    std::lock_guard lock(mutex_);
    entries_.erase(labels);
  }

  std::size_t size() const {
    std::lock_guard lock(mutex_);
    return entries_.size();
  }

  std::string_view type() const noexcept override {
    if constexpr (std::same_as<T, Counter>) {
      return "counter";
    } else if constexpr (std::same_as<T, Gauge>) {
      return "gauge";
    } else {
      return "histogram";
    }
  }

  const std::vector<double>& buckets() const noexcept { return buckets_; }

  void serialize(std::string& out) const override {
    std::lock_guard lock(mutex_);
    if (entries_.empty()) return;
    detail::write_header(out, name(), help(), type());
    for (const auto& [labels, entry] : entries_) {
      if constexpr (std::same_as<T, Histogram>) {
        write_histogram(out, entry.label_text, *entry.metric);
      } else if (entry.metric) {
        detail::write_sample(out, name(), entry.label_text, entry.metric->value());
      } else {
        detail::write_sample(out, name(), entry.label_text, entry.callback());
      }
    }
  }

 private:
  struct Entry {
    std::string label_text;
    std::unique_ptr<T> metric;        // null for a callback gauge
    std::function<double()> callback;
  };

  std::unique_ptr<T> make() const {
    if constexpr (std::same_as<T, Histogram>) {
      return std::make_unique<Histogram>(buckets_);
    } else {
      return std::make_unique<T>();
    }
  }

  void write_histogram(std::string& out, const std::string& labels, const Histogram& histogram) const {
    const Histogram::Snapshot snap = histogram.snapshot();
    const std::string bucket = name() + "_bucket";
    for (std::size_t i = 0; i < snap.cumulative.size(); ++i) {
      const std::string le = i < buckets_.size() ? detail::format_value(buckets_[i]) : "+Inf";
      detail::write_sample(out, bucket, labels, static_cast<double>(snap.cumulative[i]), "le=\"" + le + "\"");
    }
    detail::write_sample(out, name() + "_sum", labels, snap.sum);
    detail::write_sample(out, name() + "_count", labels, static_cast<double>(snap.count));
  }

  std::vector<double> buckets_;
  mutable std::mutex mutex_;
  std::map<Labels, Entry> entries_;
};

}  // namespace hbingest::metrics
