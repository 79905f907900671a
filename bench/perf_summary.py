#!/usr/bin/env python3
"""Where the daemon's CPU goes, by pipeline step, from a folded perf profile.

  PERF_DATA=/tmp/ingest.data bench/ingest_bench.sh 300000 4
  perf script -i /tmp/ingest.data | inferno-collapse-perf --all > /tmp/ingest.folded
  bench/perf_summary.py /tmp/ingest.folded

Each sample goes to the first step whose frame is on its stack (the order below), so the steps add
up to 100 %. "kernel" is the part of a step's samples spent in the kernel, "page faults" the part
spent handling page faults (first touch of newly allocated memory).
"""
import collections
import sys

# (step, frame substrings); the first match wins.
STEPS = [
    # Inlined frames lose their class: write_range is Thrift2Sink::write_range.
    ("writer: Thrift2 putMultiple (convert, serialise, send, receive)",
     ["Thrift2Sink::write", "Thrift2PutEncoder", "write_range"]),
    ("writer: other (queue, metrics)", ["WriterPool::run_writer"]),
    ("decode (JSON -> cells)", ["EventDecoder::decode"]),
    ("row key (KeySpec::encode)", ["KeySpec::encode"]),
    ("batcher (rows into batches)", ["Batcher::"]),
    ("Kafka poll + copy of each message", ["KafkaSource::Impl::poll"]),
    ("completions (offset tracker, freeing stored batches)", ["Pipeline::drain_completions"]),
    ("per-event bookkeeping (tracker, clocks, metrics, route)", ["Pipeline::handle"]),
    ("pipeline loop, other", ["Pipeline::"]),
]


def step_of(frames):
    if frames[0].startswith("rdk:"):
        return "librdkafka's threads (fetch, decompress, commit)"
    for name, needles in STEPS:
        if any(needle in frame for frame in frames for needle in needles):
            return name
    return "other (start-up, HTTP /metrics, signal and table-watch threads)"


def main(path):
    total = 0
    by_step = collections.Counter()
    kernel = collections.Counter()
    faults = collections.Counter()
    for line in open(path, encoding="utf-8", errors="replace"):
        stack, _, count = line.rstrip("\n").rpartition(" ")
        if not stack:
            continue
        n = int(count)
        frames = stack.split(";")
        step = step_of(frames)
        total += n
        by_step[step] += n
        if frames[-1].endswith("_[k]"):
            kernel[step] += n
        if any("exc_page_fault" in frame for frame in frames):
            faults[step] += n
    print("| step | share of CPU | of which kernel | of which page faults |")
    print("|---|---|---|---|")
    for step, n in by_step.most_common():
        print(f"| {step} | {100 * n / total:.1f} % | {100 * kernel[step] / total:.1f} % | "
              f"{100 * faults[step] / total:.1f} % |")
    print(f"| **all** | 100 % | {100 * sum(kernel.values()) / total:.1f} % | "
          f"{100 * sum(faults.values()) / total:.1f} % |")


if __name__ == "__main__":
    main(sys.argv[1])
