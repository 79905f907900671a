#pragma once
// How many batches the writers keep at the gateways at once (the depth), found from what the acks
// say instead of configured: enough to keep the gateways busy on any machine and link, no more
// than helps.
//
// TCP Vegas' rule on batches instead of packets, with a hill climb on the acknowledged rows/s. The
// lowest recent batch latency (`base`) is what a batch costs when none waits before it; at depth d
// with mean latency L, about d × (1 − base/L) batches wait at the gateway instead of being worked
// on. Once per window (at least `window` long and at least `depth` acks):
// - when batches wait (more than `shrink_above`), it shrinks by a quarter, at least one;
// - otherwise it explores, up and down in turn, `probe_every` windows apart. Up (only while hardly
//   any batch waits): one batch more per window while each step raises the rows/s by `min_gain`;
//   the step that did not is taken back (latency rose without throughput). Down: one batch less
//   per window while the rows/s stay within `min_gain` of where the run started; the step that
//   cost more is taken back. A depth that started too deep has a queue inside its base latency,
//   which the latency rule cannot see (Vegas' blind spot; BBR probes its minimum RTT for the same
//   reason);
// - a window in which the writers never had `depth` batches at once changes nothing: the depth did
//   not bound it (nothing to send), so it says nothing about the depth.
// Bounded by [1, max_depth] (writer.writers: one connection per batch in flight).
//
// Not thread-safe: the writer pool calls it under its lock. Time is passed in (tests drive a fake
// clock).

#include <chrono>
#include <cstddef>
#include <deque>

namespace hbingest::ingest {

struct DepthControllerOptions {
  std::size_t max_depth = 4;
  std::size_t initial_depth = 4;  // clamped to [1, max_depth]
  // A decision needs this much time and at least `depth` acks: fewer are noise.
  std::chrono::milliseconds window{250};
  // Vegas' alpha and beta, in batches waiting at the gateway.
  double grow_below = 1.0;
  double shrink_above = 2.0;
  // A step up that raised the rows/s by less than this share counts as no gain.
  double min_gain = 0.05;
  // The base latency is the lowest window mean of this many recent windows: it follows a link
  // that became slower for good, instead of taking everything above an old minimum for queueing.
  std::size_t base_windows = 40;
  // Windows between two runs of exploring steps (see above).
  std::size_t probe_every = 16;
};

// What the last closed window saw; zeros before the first.
struct FlowEstimate {
  std::size_t depth = 0;
  double rows_per_second = 0;
  double mean_batch_rows = 0;
  std::chrono::nanoseconds mean_latency{0};
  std::chrono::nanoseconds base_latency{0};
};

class DepthController {
 public:
  using Clock = std::chrono::steady_clock;

  DepthController(DepthControllerOptions options, Clock::time_point now);

  // A batch was handed to a writer; `in_flight` counts it with the others at the gateways.
  void on_send(std::size_t in_flight);
  // A batch of `rows` was acknowledged `latency` after it was sent (the successful call only).
  // Returns true when the depth changed.
  bool on_ack(std::size_t rows, Clock::duration latency, Clock::time_point now);

  std::size_t depth() const { return depth_; }
  const FlowEstimate& estimate() const { return estimate_; }

 private:
  // Closes the window and decides. Returns true when the depth changed.
  bool decide(Clock::time_point now);

  DepthControllerOptions options_;
  std::size_t depth_;
  FlowEstimate estimate_;
  std::deque<double> recent_latencies_;  // window means, seconds, newest last
  // The window being measured.
  Clock::time_point window_start_;
  std::size_t acks_ = 0;
  std::size_t rows_ = 0;
  double latency_sum_ = 0;  // seconds
  std::size_t most_in_flight_ = 0;
  // The step taken at the last decision, judged at the next one: a step up by the rows/s it
  // brought, a probe down by what it cost against the depth the probing started from.
  enum class Step { none, up, probe };
  Step last_step_ = Step::none;
  double reference_rows_per_second_ = 0;
  bool explore_up_ = true;            // the next run of steps goes up (else down)
  std::size_t cooldown_windows_ = 0;  // no new run of steps until this many more decisions
};

// Offsets in flight the pipeline needs for `estimate` (Little's law, with headroom): the batches at
// the gateways, as many again ready to go so that no writer waits for the pipeline, a batch being
// filled and one poll, or a quarter second of the observed flow if that is more (the pipeline
// and Kafka stall for moments). Never below what a batch and a poll need.
std::size_t derived_inflight_rows(const FlowEstimate& estimate, std::size_t batch_max_rows, std::size_t poll_batch);

}  // namespace hbingest::ingest
