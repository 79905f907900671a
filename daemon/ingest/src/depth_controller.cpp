#include "hbingest/ingest/depth_controller.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace hbingest::ingest {

namespace {

using Seconds = std::chrono::duration<double>;

// The half second of flow derived_inflight_rows() keeps ready beyond the batches at the gateways:
// a gateway or Kafka that stalls for a moment must not leave the writers without batches.
constexpr double kFlowHeadroomSeconds = 0.5;

}  // namespace

DepthController::DepthController(DepthControllerOptions options, Clock::time_point now)
    : options_(options),
      depth_(std::clamp<std::size_t>(options.initial_depth, 1, std::max<std::size_t>(options.max_depth, 1))),
      window_start_(now) {
  options_.max_depth = std::max<std::size_t>(options_.max_depth, 1);
  estimate_.depth = depth_;
}

void DepthController::on_send(std::size_t in_flight) { most_in_flight_ = std::max(most_in_flight_, in_flight); }

bool DepthController::on_ack(std::size_t rows, Clock::duration latency, Clock::time_point now) {
  ++acks_;
  rows_ += rows;
  latency_sum_ += std::chrono::duration_cast<Seconds>(latency).count();
  if (now - window_start_ < options_.window || acks_ < depth_) return false;
  return decide(now);
}

bool DepthController::decide(Clock::time_point now) {
  const double elapsed = std::chrono::duration_cast<Seconds>(now - window_start_).count();
  const double rows_per_second = elapsed > 0 ? static_cast<double>(rows_) / elapsed : 0;
  const double latency = latency_sum_ / static_cast<double>(acks_);

  const std::size_t before = depth_;
  if (most_in_flight_ >= depth_) {
    if (cooldown_windows_ > 0) --cooldown_windows_;
    // Ends a run of steps: the next exploration goes the other way, after a pause, and the next
    // window (at the depth settled on) becomes the reference for the latency guard.
    const auto settle = [&](bool explore_up_next) {
      explore_up_ = explore_up_next;
      cooldown_windows_ = options_.probe_every;
      rebaseline_ = true;
    };
    switch (std::exchange(last_step_, Step::none)) {
      case Step::up:
        if (rows_per_second <= reference_rows_per_second_ * (1 + options_.min_gain)) {
          --depth_;  // latency without throughput: back
          settle(false);
        } else if (depth_ < options_.max_depth) {
          ++depth_;  // the step bought throughput: another one
          last_step_ = Step::up;
          reference_rows_per_second_ = rows_per_second;
        } else {
          settle(false);
        }
        break;
      case Step::probe:
        if (rows_per_second < reference_rows_per_second_ * (1 - options_.min_gain)) {
          ++depth_;  // the probe cost throughput: back
          settle(true);
        } else if (depth_ > 1) {
          --depth_;  // as fast with less: one less again, judged against where the probing started
          last_step_ = Step::probe;
        } else {
          settle(true);
        }
        break;
      case Step::none:
        if (rebaseline_ || settled_latency_ <= 0) {
          rebaseline_ = false;
          settled_latency_ = latency;
          settled_rows_per_second_ = rows_per_second;
        } else if (latency > settled_latency_ * (1 + options_.latency_rise) &&
                   rows_per_second <= settled_rows_per_second_ * (1 + options_.min_gain)) {
          // Latency rose without throughput since the depth was chosen (more load on the
          // gateways, queries, a compaction): a quarter less, and a new reference.
          depth_ -= std::min(depth_ - 1, std::max<std::size_t>(1, depth_ / 4));
          rebaseline_ = true;
          break;
        }
        if (cooldown_windows_ > 0) break;
        if (explore_up_ && depth_ < options_.max_depth) {
          ++depth_;
          last_step_ = Step::up;
          reference_rows_per_second_ = rows_per_second;
        } else if (depth_ > 1) {
          // One batch less, kept while it costs no throughput: a depth that started too deep
          // comes down, and its lower latency shows.
          --depth_;
          last_step_ = Step::probe;
          reference_rows_per_second_ = rows_per_second;
        } else {
          explore_up_ = true;
        }
        break;
    }
  }

  estimate_ = FlowEstimate{
      .depth = depth_,
      .rows_per_second = rows_per_second,
      .mean_batch_rows = static_cast<double>(rows_) / static_cast<double>(acks_),
      .mean_latency = std::chrono::duration_cast<std::chrono::nanoseconds>(Seconds(latency)),
  };
  window_start_ = now;
  acks_ = 0;
  rows_ = 0;
  latency_sum_ = 0;
  // The batches still at the gateways belong to the next window too.
  most_in_flight_ = 0;
  return depth_ != before;
}

std::size_t derived_inflight_rows(const FlowEstimate& estimate, std::size_t batch_max_rows, std::size_t poll_batch) {
  const double batch_rows =
      estimate.mean_batch_rows > 0 ? estimate.mean_batch_rows : static_cast<double>(batch_max_rows);
  const double at_gateways = static_cast<double>(std::max<std::size_t>(estimate.depth, 1)) * batch_rows;
  const double ready = std::max(at_gateways, estimate.rows_per_second * kFlowHeadroomSeconds);
  const double rows = at_gateways + ready + static_cast<double>(batch_max_rows) + static_cast<double>(poll_batch);
  // Bounded before the conversion: a hostile or broken estimate must not overflow it.
  constexpr double kMost = 1e12;
  return static_cast<std::size_t>(std::ceil(std::min(rows, kMost)));
}

}  // namespace hbingest::ingest
