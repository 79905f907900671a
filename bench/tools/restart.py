#!/usr/bin/env python3
"""How long ingest stops when daemons start, crash and restart (bench/restart.sh is the entry point).

Three scenarios on the local stack, each with `kafka.group_instance_id` unset (dynamic membership)
and set (static membership), `--membership` choosing:

  cold     `hbingest run` started against a preloaded topic with a fresh consumer group: time from
           the process start to the first row stored, and when the daemon logs it, its own split
           ("first row stored after X ms (joined group after Y ms, first message after Z ms)").
  kill     one daemon ingesting a steady stream (`hbingest gen --rate`), killed with SIGKILL and
           started again at once with the same config: time from the kill to the first row the new
           process stores. Repeated; then the stream stops and every produced event must be stored.
  rolling  three daemons in one group over 12 partitions of a steady stream, restarted one after the
           other (SIGTERM, wait for the exit, start again, wait until it stores rows, settle): per
           partition, the longest time without progress of the group's committed offset. Then every
           produced event must be stored.

First rows: the new process's `hbingest_rows_written_all_total` (its /metrics, read every 20 ms)
turning positive. Gaps: the group's committed offsets, read from the broker every 100 ms by a client
of the benchmark's own (it does not join the group); the daemons commit every `--commit-interval`
(200 ms here against the default 1 s, so that the commit cadence adds at most that to a gap); a
daemon commits only what is stored, so an offset that does not move is a partition whose rows are
not being stored. The same measure over the steady phase before the first restart is the floor.

Nothing here asserts a time; a missing row, an invalid event or a daemon that exits on its own fails.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import compare  # noqa: E402  (bench/tools/compare.py: the stack, the tables, the link proxies)
from compare import REPO, BenchmarkBroken, Scrape, free_port, log, run  # noqa: E402

compare.LOG_PREFIX = "restart"

# The daemon's own account of its start, when it gives one (info level).
# ("?" for a step it did not see.)
FIRST_ROW_LINE = re.compile(r"first row stored after ([\d.]+|\?) ms \(joined group after ([\d.]+|\?) ms, "
                            r"first message after ([\d.]+|\?) ms\)")
MEMBERSHIPS = ("dynamic", "static")
# Whether the measured binary writes FIRST_ROW_LINE (None: not known yet).
LOGS_FIRST_ROW: bool | None = None


@dataclass
class Daemon:
    """One `hbingest run` process of the benchmark."""

    name: str
    hb: str
    config: Path
    port: int
    log_path: Path
    pin: list[str]
    proc: subprocess.Popen | None = None
    started: float = 0.0
    log_offset: int = 0

    def start(self) -> "Daemon":
        self.log_offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        with open(self.log_path, "a") as out:
            self.started = time.monotonic()
            self.proc = subprocess.Popen([*self.pin, self.hb, "run", "--config", str(self.config)], stdout=out,
                                         stderr=subprocess.STDOUT)
        return self

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def rows(self) -> float:
        return Scrape(self.port).sum("hbingest_rows_written_all_total")

    def check(self) -> None:
        """A daemon that exited on its own, or met an invalid event, breaks the benchmark."""
        if self.proc is not None and self.proc.poll() is not None:
            raise BenchmarkBroken(f"{self.name} exited {self.proc.returncode} on its own:\n{self.tail()}")
        scrape = Scrape(self.port)
        bad = scrape.sum("hbingest_dead_letters_total") + scrape.sum("hbingest_events_invalid_total")
        if bad:
            raise BenchmarkBroken(f"{self.name}: {bad:.0f} event(s) invalid or dead-lettered")

    def wait_first_row(self, since: float, timeout: float = 180.0) -> float:
        """Seconds from `since` until this process has stored a row; on the way, the moment it had
        consumed its first message (self.first_message_at, its hbingest_events_consumed_total)."""
        deadline = time.monotonic() + timeout
        self.first_message_at = None
        while time.monotonic() < deadline:
            scrape = Scrape(self.port)
            now = time.monotonic()
            if self.first_message_at is None and scrape.sum("hbingest_events_consumed_total") > 0:
                self.first_message_at = now
            if scrape.sum("hbingest_rows_written_all_total") > 0:
                if self.first_message_at is None:
                    self.first_message_at = now
                return now - since
            if not self.alive():
                raise BenchmarkBroken(f"{self.name} exited {self.proc.returncode} before storing a row:\n{self.tail()}")
            time.sleep(0.02)
        raise BenchmarkBroken(f"{self.name}: no row stored within {timeout:.0f} s:\n{self.tail()}")

    def own_account(self) -> dict | None:
        """The daemon's info line about its first row (this process's part of the log), if it wrote one.
        The metric that told us a row was stored moves before the line reaches the log file (it is
        logged after the batch's acknowledgement is counted), so the line gets a moment to appear;
        a binary that never logged it (an older build) is not waited for again."""
        global LOGS_FIRST_ROW
        deadline = time.monotonic() + (0.0 if LOGS_FIRST_ROW is False else 3.0)
        while True:
            text = self.log_path.read_text(errors="replace")[self.log_offset:]
            if m := FIRST_ROW_LINE.search(text):
                LOGS_FIRST_ROW = True
                ms = [float("nan") if v == "?" else float(v) for v in m.groups()]
                return {"first_row_ms": ms[0], "joined_ms": ms[1], "first_message_ms": ms[2]}
            if time.monotonic() >= deadline:
                if LOGS_FIRST_ROW is None:
                    LOGS_FIRST_ROW = False
                return None
            time.sleep(0.05)

    def kill(self) -> float:
        """SIGKILL; returns the moment it was sent."""
        self.proc.send_signal(signal.SIGKILL)
        at = time.monotonic()
        self.proc.wait()
        return at

    def stop(self, timeout: float = 60.0) -> float:
        """SIGTERM and wait for the exit (a clean shutdown: drain, final commit); returns its seconds."""
        at = time.monotonic()
        self.proc.terminate()
        try:
            status = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            raise BenchmarkBroken(f"{self.name} did not exit within {timeout:.0f} s of SIGTERM:\n{self.tail()}")
        if status != 0:
            raise BenchmarkBroken(f"{self.name} exited {status} on SIGTERM:\n{self.tail()}")
        return time.monotonic() - at

    def tail(self) -> str:
        return self.log_path.read_text(errors="replace")[-2000:]


class Stream:
    """A steady stream of valid login/order events: `hbingest gen --count 0 --rate R`."""

    def __init__(self, hb: str, brokers: str, topic: str, partitions: int, rate: float, log_path: Path):
        self.cmd = [hb, "gen", "--brokers", brokers, "--topic", topic, "--partitions", str(partitions), "--count",
                    "0", "--rate", str(rate), "--invalid-fraction", "0"]
        self.log = open(log_path, "ab")
        self.proc = subprocess.Popen(self.cmd, stdout=self.log, stderr=subprocess.STDOUT)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(30)
        self.log.close()


class GroupWatch:
    """When the group, as the broker describes it, is stable with partitions assigned to members that
    were not in it when the watch began: a new process has joined and got its partitions. Read every
    `interval` s with the admin API; it needs nothing of the daemon, so it times a build that does
    not log its own start too."""

    def __init__(self, brokers: str, group: str, interval: float = 0.05):
        from confluent_kafka.admin import AdminClient

        self.admin = AdminClient({"bootstrap.servers": brokers})
        self.group, self.interval = group, interval
        self.old_members = self.members()[1]
        self.joined_at: float | None = None
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.watch, daemon=True)
        self.thread.start()

    def members(self) -> tuple[bool, set[str]]:
        """(stable with every partition assigned to someone, member ids holding partitions)."""
        from confluent_kafka import ConsumerGroupState

        try:
            description = self.admin.describe_consumer_groups([self.group], request_timeout=5)[self.group].result()
        except Exception:  # not yet known to the coordinator
            return False, set()
        holding = {m.member_id for m in description.members
                   if m.assignment is not None and m.assignment.topic_partitions}
        return description.state == ConsumerGroupState.STABLE, holding

    def watch(self) -> None:
        while not self.stopping.is_set() and self.joined_at is None:
            stable, holding = self.members()
            if stable and holding and not holding & self.old_members:
                self.joined_at = time.monotonic()
            self.stopping.wait(self.interval)

    def close(self) -> None:
        self.stopping.set()
        self.thread.join()


class CommitWatch:
    """The group's committed offsets, read from the broker every `interval` s by a client that does not
    join the group: per partition, the moments its committed offset moved."""

    def __init__(self, brokers: str, group: str, topic: str, partitions: int, interval: float = 0.1):
        from confluent_kafka import Consumer, TopicPartition

        self.consumer = Consumer({"bootstrap.servers": brokers, "group.id": group, "enable.auto.commit": False})
        self.partitions = [TopicPartition(topic, p) for p in range(partitions)]
        self.interval = interval
        self.moves: dict[int, list[tuple[float, int]]] = {p: [] for p in range(partitions)}
        self.last: dict[int, int] = {}
        self.stopping = threading.Event()
        self.thread = threading.Thread(target=self.watch, daemon=True)
        self.thread.start()

    def watch(self) -> None:
        while not self.stopping.is_set():
            try:
                committed = self.consumer.committed(self.partitions, timeout=5)
            except Exception as e:  # a coordinator move mid-rebalance: try again on the next look
                log(f"commit watch: {e}")
                committed = []
            now = time.monotonic()
            for tp in committed:
                if tp.offset >= 0 and tp.offset != self.last.get(tp.partition):
                    self.last[tp.partition] = tp.offset
                    self.moves[tp.partition].append((now, tp.offset))
            self.stopping.wait(self.interval)

    def longest_gaps(self, start: float, end: float) -> dict[int, tuple[float, float]]:
        """Per partition, (longest seconds without a move within [start, end], when it began, relative to
        start). The window's edges count as moves, so a partition that never moved has the whole window."""
        gaps = {}
        for p, moves in self.moves.items():
            times = [start, *(t for t, _ in moves if start < t < end), end]
            longest = max(((b - a), a - start) for a, b in zip(times, times[1:]))
            gaps[p] = longest
        return gaps

    def close(self) -> None:
        self.stopping.set()
        self.thread.join()
        self.consumer.close()


@dataclass
class Outcome:
    scenario: str
    membership: str
    figures: list[dict] = field(default_factory=list)


class Restarts:
    def __init__(self, args: argparse.Namespace, bench: compare.Bench):
        self.args, self.bench = args, bench
        self.hb = bench.hb
        self.static_supported = self.supports_static()
        self.recorded: set[str] = set()

    def set_instance_id(self, cfg: dict, instance_id: str) -> None:
        """--static-as option: kafka.group_instance_id; property: librdkafka's group.instance.id in
        kafka.properties (for a build without the option that passes the property through)."""
        if self.args.static_as == "option":
            cfg["kafka"]["group_instance_id"] = instance_id
        else:
            cfg["kafka"].setdefault("properties", {})["group.instance.id"] = instance_id

    def supports_static(self) -> bool:
        """Whether this build takes the instance id the way --static-as gives it (check-config refuses an
        unknown option, and a build with the option refuses the property)."""
        cfg = json.loads(self.bench.config("probe", "probe", 0).read_text())
        self.set_instance_id(cfg, "bench-probe")
        path = self.bench.tmp / "probe_static.yaml"
        path.write_text(json.dumps(cfg))
        result = subprocess.run([self.hb, "check-config", str(path)], capture_output=True, text=True)
        if result.returncode != 0:
            log(f"this build does not take the instance id as a {self.args.static_as} "
                f"({result.stderr.strip()[-300:]}): static membership is skipped")
        return result.returncode == 0

    def memberships(self) -> list[str]:
        wanted = list(MEMBERSHIPS) if self.args.membership == "both" else [self.args.membership]
        return [m for m in wanted if m == "dynamic" or self.static_supported]

    def daemon(self, name: str, table: str, topic: str, group: str, instance_id: str | None) -> Daemon:
        """A daemon's config: compare.py's (defaults, the stack's or the link proxies' addresses), at info
        level (for its own account of the start), committing every --commit-interval, with the
        instance id when static."""
        port = free_port()
        cfg = json.loads(self.bench.config(table, group, port).read_text())
        cfg["kafka"]["topics"] = [topic]
        cfg["kafka"]["commit_interval"] = self.args.commit_interval
        if instance_id:
            self.set_instance_id(cfg, instance_id)
        cfg["logging"] = {"level": "info"}
        path = self.bench.tmp / f"{name}.yaml"
        path.write_text(json.dumps(cfg, indent=1))
        if table not in self.recorded:  # one config per scenario and membership: the rest differ in name and port
            self.recorded.add(table)
            self.bench.commands.append(f"{self.hb} run --config {path}  # {json.dumps(cfg)}")
        return Daemon(name, self.hb, path, port, self.bench.tmp / f"{name}.log", self.bench.pin)

    def fresh(self, label: str) -> tuple[str, str]:
        table = f"rst_{self.bench.run_id}_{label}"
        self.bench.fresh_table(table)
        return table, table  # the table's name also names topic and group: unique per scenario

    def stream(self, topic: str) -> Stream:
        stream = Stream(self.hb, self.bench.stack.kafka, topic, self.args.partitions, self.args.rate,
                        self.bench.tmp / f"{topic}_gen.log")
        self.bench.commands.append(shlex.join(stream.cmd) + "  # the steady stream")
        return stream

    def count_rows(self, table: str) -> int:
        rows, _cells, _digest, _bytes = run(self.bench.java("TableTool", self.bench.stack.zookeeper, "cells",
                                                            table)).split()
        return int(rows)

    def end_offsets(self, topic: str) -> int:
        from confluent_kafka import Consumer, TopicPartition

        consumer = Consumer({"bootstrap.servers": self.bench.stack.kafka, "group.id": f"{topic}_ends"})
        total = sum(consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]
                    for p in range(self.args.partitions))
        consumer.close()
        return total

    def drain_and_check(self, daemons: list[Daemon], watch: CommitWatch, topic: str, table: str) -> int:
        """After the stream stopped: wait until the group has committed every partition's end, stop the
        daemons, and count the table's rows: every produced event must be stored (one row each)."""
        from confluent_kafka import Consumer, TopicPartition

        consumer = Consumer({"bootstrap.servers": self.bench.stack.kafka, "group.id": f"{topic}_ends"})
        ends = {p: consumer.get_watermark_offsets(TopicPartition(topic, p), timeout=10)[1]
                for p in range(self.args.partitions)}
        consumer.close()
        deadline = time.monotonic() + 120
        while any(watch.last.get(p, 0) < end for p, end in ends.items()):
            for d in daemons:
                d.check()
            if time.monotonic() > deadline:
                behind = {p: end - watch.last.get(p, 0) for p, end in ends.items() if watch.last.get(p, 0) < end}
                raise BenchmarkBroken(f"{topic}: not all committed 120 s after the stream stopped: {behind}")
            time.sleep(0.2)
        for d in daemons:
            d.check()
            d.stop()
        produced = sum(ends.values())
        rows = self.count_rows(table)
        if rows != produced:
            raise BenchmarkBroken(f"{table}: {rows} rows for {produced} produced events: "
                                  f"{produced - rows} missing" if rows < produced else
                                  f"{table}: {rows} rows for {produced} produced events: more rows than events")
        log(f"{table}: all {produced} produced events stored")
        return produced

    # -- the scenarios

    def cold(self, membership: str) -> Outcome:
        outcome = Outcome("cold", membership)
        table, topic = self.fresh(f"cold_{membership}")
        run([self.hb, "gen", "--brokers", self.bench.stack.kafka, "--topic", topic, "--partitions",
             str(self.args.partitions), "--count", str(self.args.cold_events), "--invalid-fraction", "0"])
        try:
            for i in range(self.args.repeats):
                group = f"{topic}_g{i}"  # a fresh group: nobody to wait for, offsets from the earliest
                d = self.daemon(f"{table}_{i}", table, topic, group,
                                f"bench-cold-{i}" if membership == "static" else None)
                group_watch = GroupWatch(self.bench.stack.kafka, group)
                d.start()
                seconds = d.wait_first_row(d.started)
                group_watch.close()
                figures = {"first_row_s": seconds, "own": d.own_account(), "seen": seen(d, group_watch, d.started)}
                d.check()
                d.stop()
                outcome.figures.append(figures)
                log(f"cold {membership} {i + 1}/{self.args.repeats}: first row stored {seconds:.2f} s after start "
                    f"(seen: group stable / first message / first row ms {fmt_seen(figures['seen'], seconds)})"
                    + (f"; the daemon says {figures['own']}" if figures["own"] else ""))
        finally:
            self.bench.drop_table(table)
        return outcome

    def kill(self, membership: str) -> Outcome:
        outcome = Outcome("kill", membership)
        table, topic = self.fresh(f"kill_{membership}")
        stream = self.stream(topic)
        instance = "bench-kill-0" if membership == "static" else None
        watch = None
        d = self.daemon(f"{table}_0", table, topic, topic, instance)
        try:
            time.sleep(1)  # the stream creates the topic
            watch = CommitWatch(self.bench.stack.kafka, topic, topic, self.args.partitions)
            d.start()
            d.wait_first_row(d.started)
            for i in range(self.args.repeats):
                time.sleep(self.args.settle)
                d.check()
                group_watch = GroupWatch(self.bench.stack.kafka, topic)  # the members before the kill
                killed_at = d.kill()
                d = self.daemon(f"{table}_{i + 1}", table, topic, topic, instance)
                d.start()
                seconds = d.wait_first_row(killed_at)
                group_watch.close()
                outcome.figures.append({"kill_to_first_row_s": seconds, "start_to_first_row_s":
                                        seconds - (d.started - killed_at), "own": d.own_account(),
                                        "seen": seen(d, group_watch, killed_at)})
                log(f"kill {membership} {i + 1}/{self.args.repeats}: first row stored {seconds:.2f} s after the kill "
                    f"(seen: group stable / first message / first row ms "
                    f"{fmt_seen(outcome.figures[-1]['seen'], seconds)})"
                    + (f"; the daemon says {outcome.figures[-1]['own']}" if outcome.figures[-1]["own"] else ""))
            time.sleep(self.args.settle)
            stream.stop()
            outcome.figures.append({"stored": self.drain_and_check([d], watch, topic, table)})
        finally:
            if stream.proc.poll() is None:
                stream.stop()
            if d.alive():
                d.proc.kill()
                d.proc.wait()
            if watch:
                watch.close()
            self.bench.drop_table(table)
        return outcome

    def rolling(self, membership: str) -> Outcome:
        outcome = Outcome("rolling", membership)
        table, topic = self.fresh(f"rolling_{membership}")
        stream = self.stream(topic)
        ids = [f"bench-{i}" if membership == "static" else None for i in range(self.args.daemons)]
        daemons: list[Daemon] = []
        watch = None
        try:
            time.sleep(1)
            watch = CommitWatch(self.bench.stack.kafka, topic, topic, self.args.partitions)
            daemons = [self.daemon(f"{table}_{i}_0", table, topic, topic, ids[i]).start()
                       for i in range(self.args.daemons)]
            for d in daemons:
                d.wait_first_row(d.started)
            # Settled: every partition committed at least once, then a steady phase: the floor.
            deadline = time.monotonic() + 120
            while len(watch.last) < self.args.partitions:
                if time.monotonic() > deadline:
                    raise BenchmarkBroken(f"only partitions {sorted(watch.last)} committed within 120 s")
                time.sleep(0.2)
            steady_from = time.monotonic()
            time.sleep(self.args.settle)
            window_from = time.monotonic()
            restarts = []
            for i in range(self.args.daemons):
                for d in daemons:
                    d.check()
                stop_s = daemons[i].stop()
                new = self.daemon(f"{table}_{i}_1", table, topic, topic, ids[i]).start()
                daemons[i] = new
                first = new.wait_first_row(new.started)
                restarts.append({"daemon": i, "stop_s": stop_s, "start_to_first_row_s": first, "own": new.own_account()})
                log(f"rolling {membership}: daemon {i} stopped in {stop_s:.2f} s, its new process stored a row "
                    f"{first:.2f} s after its start")
                time.sleep(self.args.settle)
            window_to = time.monotonic()
            stream.stop()
            floor = watch.longest_gaps(steady_from, window_from)
            gaps = watch.longest_gaps(window_from, window_to)
            produced = self.drain_and_check(daemons, watch, topic, table)
            outcome.figures.append({"restarts": restarts, "floor": floor, "gaps": gaps, "stored": produced})
            log(f"rolling {membership}: longest gap per partition "
                + ", ".join(f"{p}: {g:.2f} s" for p, (g, _) in sorted(gaps.items()))
                + f"; floor (steady phase) {max(g for g, _ in floor.values()):.2f} s")
        finally:
            if stream.proc.poll() is None:
                stream.stop()
            for d in daemons:
                if d.alive():
                    d.proc.kill()
                    d.proc.wait()
            if watch:
                watch.close()
            self.bench.drop_table(table)
        return outcome


def seen(d: Daemon, group_watch: GroupWatch, since: float) -> dict:
    """What the benchmark saw from outside, in ms from `since`: the group stable with the new process's
    partitions assigned (the broker's view), its first consumed message and its first stored row."""
    ms = lambda at: (at - since) * 1000 if at is not None else float("nan")  # noqa: E731
    return {"joined_ms": ms(group_watch.joined_at), "first_message_ms": ms(d.first_message_at)}


def fmt_seen(seen: dict, first_row_s: float) -> str:
    return f"{seen['joined_ms']:.0f} / {seen['first_message_ms']:.0f} / {first_row_s * 1000:.0f}"


# ------------------------------------------------------------------ report


def fmt_own(own: dict | None) -> str:
    if not own:
        return "(not logged)"
    return f"{own['joined_ms']:.0f} / {own['first_message_ms']:.0f} / {own['first_row_ms']:.0f}"


def report(args, bench: compare.Bench, outcomes: list[Outcome], static_supported: bool) -> str:
    lines = [
        "# Restarts (`bench/restart.sh`)",
        "",
        f"Run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}." + (f" **{args.note}**" if args.note else ""),
        "",
        "| machine | |", "|---|---|",
        *(f"| {k} | {v} |" for k, v in compare.machine().items()),
        *(f"| {k} | {v} |" for k, v in compare.versions(args.build_dir).items()),
        "",
        compare.setting(args, who="daemons"),
        "",
        "Command:",
        "",
        "```",
        "bench/restart.sh " + shlex.join(sys.argv[1:]),
        "```",
        "",
        f"hbingest measured: `{bench.hb}` ({compare.hbingest_version(bench.hb)}).",
    ]
    if not static_supported:
        lines += ["", "This build does not take the instance id "
                  + ("(`kafka.group_instance_id`)" if args.static_as == "option" else
                     "(`group.instance.id` in `kafka.properties`)") + ": static membership was not run."]
    elif args.static_as == "property" and args.membership != "dynamic":
        lines += ["", "Static membership: librdkafka's `group.instance.id` given in `kafka.properties` "
                  "(`--static-as property`), not the daemon's `kafka.group_instance_id`."]
    cold = [o for o in outcomes if o.scenario == "cold"]
    if cold:
        lines += [
            "",
            f"## Cold start: `hbingest run` start to first row stored ({args.cold_events:,} events preloaded, a "
            "fresh group each time)",
            "",
            "| membership | start → first row stored, s (min / median / max) | each run, s "
            "| seen from outside: group stable with it / first message consumed / first row, ms "
            "| the daemon's own: joined group / first message / first row, ms |",
            "|---|---|---|---|---|",
        ]
        for o in cold:
            firsts = [f["first_row_s"] for f in o.figures]
            lines.append(f"| {o.membership} | {compare.mmm(firsts, '.2f')} | {', '.join(f'{s:.2f}' for s in firsts)} "
                         f"| {'; '.join(fmt_seen(f['seen'], f['first_row_s']) for f in o.figures)} "
                         f"| {'; '.join(fmt_own(f['own']) for f in o.figures)} |")
        lines += ["", "Start → first row: from the process start until its `hbingest_rows_written_all_total` is "
                  "positive (read every 20 ms). Seen from outside, from the process start: the group stable with "
                  "its partitions assigned to the new member (the broker's description of the group, read every "
                  "50 ms), the daemon's `hbingest_events_consumed_total` positive, its first row. The daemon's own "
                  "figures come from its info line \"first row stored after X ms (joined group after Y ms, first "
                  "message after Z ms)\", where it writes one."]
    kill = [o for o in outcomes if o.scenario == "kill"]
    if kill:
        lines += [
            "",
            f"## kill -9 mid-ingest → first row stored again ({args.rate:g} events/s produced, "
            f"{args.partitions} partitions, one daemon, restarted at once)",
            "",
            "| membership | kill → first row stored, s (min / median / max) | each run, s "
            "| new process start → first row, s | seen from outside, from the kill: group stable with the new "
            "member / first message consumed / first row, ms | the daemon's own (from its start): joined / "
            "first message / first row, ms | events produced and all stored |",
            "|---|---|---|---|---|---|---|",
        ]
        for o in kill:
            runs = [f for f in o.figures if "kill_to_first_row_s" in f]
            stored = next((f["stored"] for f in o.figures if "stored" in f), 0)
            kills = [f["kill_to_first_row_s"] for f in runs]
            starts = [f["start_to_first_row_s"] for f in runs]
            lines.append(
                f"| {o.membership} | {compare.mmm(kills, '.2f')} | {', '.join(format(s, '.2f') for s in kills)} "
                f"| {', '.join(format(s, '.2f') for s in starts)} "
                f"| {'; '.join(fmt_seen(f['seen'], f['kill_to_first_row_s']) for f in runs)} "
                f"| {'; '.join(fmt_own(f['own']) for f in runs)} | {stored:,} |")
        lines += ["", "Kill → first row: from SIGKILL to the restarted process's first stored row (its "
                  "`hbingest_rows_written_all_total` positive; it may re-store rows the killed one stored but had "
                  "not committed). With dynamic membership the group waits for the killed member's session "
                  "timeout before it assigns its partitions again."]
    rolling = [o for o in outcomes if o.scenario == "rolling"]
    if rolling:
        lines += [
            "",
            f"## Rolling restart of {args.daemons} daemons in one group ({args.partitions} partitions, "
            f"{args.rate:g} events/s produced)",
            "",
            "| membership | longest gap of any partition, s | per partition, s | floor: longest gap in the steady "
            "phase before, s | restarts: stop s / new process start → first row s | events produced and all stored |",
            "|---|---|---|---|---|---|",
        ]
        for o in rolling:
            f = o.figures[0]
            gaps = f["gaps"]
            restarts = "; ".join(f"{r['stop_s']:.1f} / {r['start_to_first_row_s']:.1f}" for r in f["restarts"])
            lines.append(
                f"| {o.membership} | **{max(g for g, _ in gaps.values()):.2f}** "
                f"| {', '.join(f'{p}: {g:.1f}' for p, (g, _) in sorted(gaps.items()))} "
                f"| {max(g for g, _ in f['floor'].values()):.2f} | {restarts} | {f['stored']:,} |")
        lines += ["", f"Gap: per partition, the longest time within the restarts' window (from the first SIGTERM "
                  f"until {args.settle:g} s after the last restarted process stored its first row) in which the "
                  f"group's committed offset did not move, read from the broker every 100 ms; the daemons commit "
                  f"every {args.commit_interval} and only what is stored, so a gap is a partition whose rows were not "
                  f"being stored, overstated by at most the commit interval plus one read. The floor is the same "
                  f"measure over the {args.settle:g} s of steady ingest before the first restart."]
    lines += ["", "Commands run:", "", "```", *bench.commands, "```"]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------ main


def main() -> int:
    p = argparse.ArgumentParser(prog="bench/restart.sh", description=__doc__.split("\n\n")[0])
    p.add_argument("--scenarios", default="cold,kill,rolling", help="comma-separated subset of cold,kill,rolling")
    p.add_argument("--membership", choices=("both", *MEMBERSHIPS), default="both",
                   help="kafka.group_instance_id unset (dynamic), set (static), or each in turn (both)")
    p.add_argument("--static-as", choices=("option", "property"), default="option",
                   help="how a static member gets its id: kafka.group_instance_id (option), or librdkafka's "
                   "group.instance.id in kafka.properties (property: for a build without the option)")
    p.add_argument("--repeats", type=int, default=3, help="cold starts and kills per membership")
    p.add_argument("--rate", type=float, default=2000.0, help="events per second produced during kill and rolling")
    p.add_argument("--partitions", type=int, default=12)
    p.add_argument("--daemons", type=int, default=3, help="daemons in the group of the rolling restart")
    p.add_argument("--settle", type=float, default=10.0,
                   help="seconds of steady ingest before a kill, between restarts and after the last one")
    p.add_argument("--cold-events", type=int, default=10_000, help="events preloaded for the cold starts")
    p.add_argument("--commit-interval", default="200ms", help="kafka.commit_interval of the daemons (gap resolution)")
    p.add_argument("--buckets", type=int, default=100)
    p.add_argument("--link-latency", type=int, default=0, metavar="MS",
                   help="as bench/compare.sh: MS each way on the daemons' links to Kafka and the gateway (Toxiproxy)")
    p.add_argument("--client-cpus", default="", metavar="LIST", help="as bench/compare.sh: taskset -c LIST for the daemons")
    p.add_argument("--build-dir", default="build")
    p.add_argument("--hbingest", default="", metavar="PATH",
                   help="the hbingest binary to measure (default: BUILD_DIR/hbingest), e.g. a build before a change")
    p.add_argument("--out", default="", help="also write the report here (it always goes to stdout)")
    p.add_argument("--note", default="")
    args = p.parse_args()
    scenarios = [s for s in args.scenarios.split(",") if s]
    if unknown := set(scenarios) - {"cold", "kill", "rolling"}:
        p.error(f"unknown scenario(s): {', '.join(sorted(unknown))}")
    # What compare.Bench reads of its arguments.
    args.events, args.kafka_property, args.key_samples = 0, [], 0

    stack = compare.stack_up()
    link = compare.LinkProxies(stack, args.link_latency, Path(compare.tempfile.gettempdir())
                               / f"restart-toxiproxy-{os.getpid()}.log") if args.link_latency else None
    outcomes: list[Outcome] = []
    try:
        bench = compare.Bench(args, stack, link)
        restarts = Restarts(args, bench)
        for scenario in scenarios:
            for membership in restarts.memberships():
                log(f"{scenario}, {membership} membership")
                outcomes.append(getattr(restarts, scenario)(membership))
    except BenchmarkBroken as e:
        print(f"restart: BROKEN: {e}", file=sys.stderr)
        return 1
    finally:
        if link:
            link.close()
    text = report(args, bench, outcomes, restarts.static_supported)
    print(text)
    if args.out:
        (REPO / args.out).write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
