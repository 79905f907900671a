#include "hbingest/support/gateway_share.h"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

namespace hbingest::support {

GatewayShare::GatewayShare(int writer_batches_while_querying) : while_querying_(writer_batches_while_querying) {
  if (while_querying_ < 1) {
    // Zero would stop ingest for as long as queries keep coming: the writers always keep one.
    throw std::invalid_argument("gateway share: the writers' batches while querying must be at least 1 (got " +
                                std::to_string(while_querying_) + ")");
  }
}

GatewayShare::Registration GatewayShare::register_query() {
  running_.fetch_add(1);
  return Registration(this);
}

void GatewayShare::leave() noexcept {
  if (running_.fetch_sub(1) > 1) return;
  // The last one: writers held back may go on. A query registered meanwhile only means they look
  // again and wait again.
  const std::lock_guard lock(mutex_);
  for (const auto& [id, listener] : listeners_) {
    try {
      listener();
    } catch (...) {
      // A listener only wakes threads; one that fails must not stop the others being woken.
    }
  }
}

GatewayShare::Subscription GatewayShare::subscribe(std::function<void()> on_raised) {
  const std::lock_guard lock(mutex_);
  const std::uint64_t id = next_id_++;
  listeners_.emplace(id, std::move(on_raised));
  return Subscription(this, id);
}

int GatewayShare::running_queries() const { return running_.load(); }

int GatewayShare::writer_batches(int wanted) const {
  const int allowed = running_.load() > 0 ? std::min(wanted, while_querying_) : wanted;
  return std::max(1, allowed);
}

GatewayShare::Registration::~Registration() {
  if (share_ != nullptr) share_->leave();
}

GatewayShare::Registration::Registration(Registration&& other) noexcept
    : share_(std::exchange(other.share_, nullptr)) {}

GatewayShare::Registration& GatewayShare::Registration::operator=(Registration&& other) noexcept {
  if (this != &other) {
    if (share_ != nullptr) share_->leave();
    share_ = std::exchange(other.share_, nullptr);
  }
  return *this;
}

void GatewayShare::Subscription::reset() noexcept {
  if (share_ == nullptr) return;
  // Under the lock: a listener call in progress ends first.
  const std::lock_guard lock(share_->mutex_);
  share_->listeners_.erase(id_);
  share_ = nullptr;
}

GatewayShare::Subscription::~Subscription() { reset(); }

GatewayShare::Subscription::Subscription(Subscription&& other) noexcept
    : share_(std::exchange(other.share_, nullptr)), id_(other.id_) {}

GatewayShare::Subscription& GatewayShare::Subscription::operator=(Subscription&& other) noexcept {
  if (this != &other) {
    reset();
    share_ = std::exchange(other.share_, nullptr);
    id_ = other.id_;
  }
  return *this;
}

}  // namespace hbingest::support
