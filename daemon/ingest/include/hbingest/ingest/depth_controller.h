#pragma once
// How many batches the writers keep at the gateways at once (the depth), found from what the acks
// say instead of configured: enough to keep the gateways busy on any machine and link, no more
// than helps.
//
// A hill climb on the acknowledged rows/s with a latency guard, in the spirit of TCP Vegas and of
// Netflix's concurrency limits (Gradient2): latency that rises without throughput means batches
// queue at the gateway and nothing else. Once per window (at least `window` long and at least
// `depth` acks):
// - it explores, up and down in turn, `probe_every` windows apart. Up: one batch more per window
//   while each step raises the rows/s by `min_gain`; the step that did not is taken back (latency
//   rose without throughput). Down: one batch less per window while the rows/s stay within
//   `min_gain` of where the run started; the step that cost more is taken back. So it settles on
//   the least depth that gives the most throughput, and a depth that started too deep comes down;
// - between runs, when the mean latency rose by more than `latency_rise` over the window after the
//   last run settled and the rows/s did not rise with it (the gateways got busier: other clients,
//   queries, compactions), it shrinks by a quarter (at least one);
// Bounded by [1, max_depth] (writer.writers: one connection per batch in flight).
//
// Not thread-safe: the writer pool calls it under its lock. Time is passed in (tests drive a fake
// clock).

#include <chrono>
#include <cstddef>
#include <limits>

namespace hbingest::ingest {

struct DepthControllerOptions {
  std::size_t max_depth = 4;
  // Clamped to [1, max_depth]. The cap by default: a gateway that needs fewer costs a few windows of
  // queueing until the probes come down, one that needs them all would otherwise wait for the climb
  // (and a window's rows/s are noisy enough to end a climb early).
  std::size_t initial_depth = std::numeric_limits<std::size_t>::max();
  // A decision needs this much time and at least `depth` acks: fewer are noise.
  std::chrono::milliseconds window{250};
  // The latency guard: a rise of this share over the settled window's latency, without more rows/s.
  double latency_rise = 0.5;
  // A step up that raised the rows/s by less than this share counts as no gain.
  double min_gain = 0.05;
  // Windows between two runs of exploring steps (see above).
  std::size_t probe_every = 8;
};

// What the last closed window saw; zeros before the first.
struct FlowEstimate {
  std::size_t depth = 0;
  double rows_per_second = 0;
  double mean_batch_rows = 0;
  std::chrono::nanoseconds mean_latency{0};
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
  bool explore_up_ = true;      // the next run of steps goes up (else down)
  bool rebaseline_ = false;     // the next quiet window becomes the latency guard's reference
  double settled_latency_ = 0;  // seconds; 0: no reference yet
  double settled_rows_per_second_ = 0;
  std::size_t cooldown_windows_ = 0;  // no new run of steps until this many more decisions
};

// Offsets in flight the pipeline needs for `estimate` (Little's law, with headroom): the batches at
// the gateways, as many again ready to go so that no writer waits for the pipeline, a batch being
// filled and one poll, or half a second of the observed flow if that is more (the pipeline
// and Kafka stall for moments). Never below what a batch and a poll need.
std::size_t derived_inflight_rows(const FlowEstimate& estimate, std::size_t batch_max_rows, std::size_t poll_batch);

}  // namespace hbingest::ingest
