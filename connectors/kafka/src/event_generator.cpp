#include "hbingest/connectors/event_generator.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace hbingest::connectors {

namespace {

using Json = nlohmann::ordered_json;  // keeps fields in the order a producer would write them

constexpr std::array<std::string_view, 4> kDevices = {"ios", "android", "web", "desktop"};
constexpr std::array<std::string_view, 4> kCurrencies = {"EUR", "USD", "GBP", "CNY"};
// created 40 %, paid 35 %, shipped 20 %, cancelled 5 %: most orders are still in flight in a
// 10-minute window.
constexpr std::array<std::pair<std::string_view, double>, 4> kStatuses = {
    {{"created", 0.40}, {"paid", 0.75}, {"shipped", 0.95}, {"cancelled", 1.0}}};
constexpr std::array<std::string_view, 3> kUnknownTypes = {"logout", "refund", "page_view"};
constexpr int kInvalidKinds = 6;

}  // namespace

std::string_view to_string(EventKind kind) noexcept {
  switch (kind) {
    case EventKind::kLogin:
      return "login";
    case EventKind::kOrder:
      return "order";
    case EventKind::kBadJson:
      return "bad_json";
    case EventKind::kMissingEventId:
      return "missing_event_id";
    case EventKind::kMissingTs:
      return "missing_ts";
    case EventKind::kBinaryGarbage:
      return "binary_garbage";
    case EventKind::kOverlongEventId:
      return "overlong_event_id";
    case EventKind::kUnknownType:
      return "unknown_type";
  }
  return "unknown";
}

EventGenerator::EventGenerator(const EventGeneratorOptions& options) : options_(options), rng_(options.seed) {
  if (!(options_.invalid_fraction >= 0.0 && options_.invalid_fraction <= 1.0)) {
    throw std::invalid_argument("event generator: invalid_fraction must be in [0, 1], got " +
                                std::to_string(options_.invalid_fraction));
  }
  if (!(options_.order_fraction >= 0.0 && options_.order_fraction <= 1.0)) {
    throw std::invalid_argument("event generator: order_fraction must be in [0, 1], got " +
                                std::to_string(options_.order_fraction));
  }
  if (options_.users == 0 || options_.users > 1'000'000) {
    throw std::invalid_argument("event generator: users must be in [1, 1000000], got " +
                                std::to_string(options_.users));
  }
  if (!(options_.zipf_exponent > 0.0)) {
    throw std::invalid_argument("event generator: zipf_exponent must be > 0, got " +
                                std::to_string(options_.zipf_exponent));
  }
  if (options_.time_spread.count() < 0) {
    throw std::invalid_argument("event generator: time_spread must not be negative");
  }
  zipf_cdf_.resize(options_.users);
  double sum = 0.0;
  for (std::uint32_t rank = 0; rank < options_.users; ++rank) {
    sum += 1.0 / std::pow(static_cast<double>(rank + 1), options_.zipf_exponent);
    zipf_cdf_[rank] = sum;
  }
  for (auto& c : zipf_cdf_) c /= sum;
  zipf_cdf_.back() = 1.0;
}

// Own mapping from the engine's bits instead of std::*_distribution, whose algorithms differ
// between standard libraries: the same seed must give the same traffic everywhere.
double EventGenerator::unit() { return static_cast<double>(rng_() >> 11) * 0x1.0p-53; }

std::uint64_t EventGenerator::below(std::uint64_t n) {
  return std::min(n - 1, static_cast<std::uint64_t>(unit() * static_cast<double>(n)));
}

std::uint32_t EventGenerator::zipf_user() {
  const double u = unit();
  const auto it = std::upper_bound(zipf_cdf_.begin(), zipf_cdf_.end(), u);
  const auto rank = static_cast<std::uint32_t>(
      std::min<std::ptrdiff_t>(it - zipf_cdf_.begin(), static_cast<std::ptrdiff_t>(zipf_cdf_.size()) - 1));
  // Rank 0 is the most active user; scatter ranks over ids so that popular users are not
  // u000000, u000001...: a fixed odd multiplier is a bijection modulo a power of two, and the
  // rejection loop keeps it one within [0, users).
  std::uint64_t id = rank;
  std::uint64_t mask = 1;
  while (mask < options_.users) mask <<= 1;
  do {
    id = (id * 0x9E3779B1ULL + 0x7F4A7C15ULL) & (mask - 1);
  } while (id >= options_.users);
  return static_cast<std::uint32_t>(id);
}

std::string EventGenerator::user_id(std::uint32_t user) const {
  std::array<char, 16> buf{};
  std::snprintf(buf.data(), buf.size(), "u%06u", user);
  return buf.data();
}

std::string EventGenerator::login_json(std::int64_t ts, const std::string& user, bool with_event_id, bool with_ts,
                                       const std::string& event_id) {
  Json j;
  if (with_event_id) j["event_id"] = event_id;
  if (with_ts) j["ts"] = ts;
  j["user_id"] = user;
  j["ip"] =
      "10." + std::to_string(below(256)) + "." + std::to_string(below(256)) + "." + std::to_string(1 + below(254));
  j["device"] = kDevices[below(kDevices.size())];
  j["success"] = unit() < 0.92;
  return j.dump();
}

std::string EventGenerator::order_json(std::int64_t ts, const std::string& user) {
  Json j;
  j["event_id"] = "order";
  j["ts"] = ts;
  j["user_id"] = user;
  std::array<char, 24> order_id{};
  std::snprintf(order_id.data(), order_id.size(), "o%012llx",
                static_cast<unsigned long long>(rng_() & 0xFFFFFFFFFFFFULL));
  j["order_id"] = order_id.data();
  // Skewed towards small baskets: 1 + 499 * u^2, in cents so that the JSON shows 2 decimals.
  const double u = unit();
  j["amount"] = std::round((1.0 + 499.0 * u * u) * 100.0) / 100.0;
  j["currency"] = kCurrencies[below(kCurrencies.size())];
  const double s = unit();
  for (const auto& [status, cumulative] : kStatuses) {
    if (s < cumulative) {
      j["status"] = status;
      break;
    }
  }
  Json items = Json::array();
  const auto count = 1 + below(4);
  for (std::uint64_t i = 0; i < count; ++i) {
    std::array<char, 16> sku{};
    std::snprintf(sku.data(), sku.size(), "sku-%05llu", static_cast<unsigned long long>(below(20000)));
    items.push_back({{"sku", sku.data()}, {"qty", 1 + below(5)}});
  }
  j["items"] = std::move(items);
  return j.dump();
}

GeneratedEvent EventGenerator::next(std::int64_t now_ms) {
  GeneratedEvent ev;
  const auto spread = static_cast<std::uint64_t>(options_.time_spread.count());
  ev.ts_ms = spread == 0 ? now_ms : now_ms - static_cast<std::int64_t>(below(spread + 1));
  const std::string user = user_id(zipf_user());
  const bool invalid = unit() < options_.invalid_fraction;
  if (!invalid) {
    ev.key = user;
    if (unit() < options_.order_fraction) {
      ev.kind = EventKind::kOrder;
      ev.payload = order_json(ev.ts_ms, user);
    } else {
      ev.kind = EventKind::kLogin;
      ev.payload = login_json(ev.ts_ms, user, true, true, "login");
    }
    return ev;
  }
  ev.kind = static_cast<EventKind>(static_cast<int>(EventKind::kBadJson) + static_cast<int>(below(kInvalidKinds)));
  switch (ev.kind) {
    case EventKind::kBadJson: {
      ev.key = user;
      const std::string whole = login_json(ev.ts_ms, user, true, true, "login");
      // Any strict prefix of a JSON object is invalid JSON.
      ev.payload = whole.substr(0, 1 + below(whole.size() - 1));
      break;
    }
    case EventKind::kMissingEventId:
      ev.key = user;
      ev.payload = login_json(ev.ts_ms, user, false, true, "");
      break;
    case EventKind::kMissingTs:
      ev.key = user;
      ev.payload = login_json(ev.ts_ms, user, true, false, "login");
      break;
    case EventKind::kBinaryGarbage: {
      ev.payload.resize(16 + below(241));
      for (auto& c : ev.payload) c = static_cast<char>(below(256));
      ev.payload[0] = static_cast<char>(0xFF);  // never valid UTF-8, never the start of JSON
      break;
    }
    case EventKind::kOverlongEventId:
      ev.key = user;
      ev.payload = login_json(ev.ts_ms, user, true, true, "login" + std::string(kOverlongEventIdLength - 5, 'x'));
      break;
    case EventKind::kUnknownType:
      ev.key = user;
      ev.payload = login_json(ev.ts_ms, user, true, true, std::string(kUnknownTypes[below(kUnknownTypes.size())]));
      break;
    case EventKind::kLogin:
    case EventKind::kOrder:
      break;
  }
  return ev;
}

}  // namespace hbingest::connectors
