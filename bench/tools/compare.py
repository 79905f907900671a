#!/usr/bin/env python3
"""Side-by-side ingest comparison on the local stack (bench/compare.sh is the entry point).

Preloads N valid login/order events into a fresh topic with `hbingest gen`, then runs, round after
round with the order rotated, each contender into a freshly bootstrapped pre-split table:

  hbingest  `hbingest run` with the default config (new consumer group each time)
  baseline  (not by default; --baseline PATH) the same with another build's binary, e.g. the commit
            before a change; it must store the same cells, byte for byte
  hbingest_avro  the same, reading the same events as Confluent-framed Avro (a copy of the topic,
            partition by partition, offset for offset, schemas registered in the stack's registry;
            decode.format: avro): its cells must equal the JSON run's
  java      bench/peers/KafkaToHBase.java: KafkaConsumer + BufferedMutator, its own keys
  ceiling   build/bench/putmultiple_ceiling: prebuilt putMultiple batches through the same gateway
  ceiling_packed  the same, its rows packed as hbingest_packed's route packs them (the packed layout's
            ceiling; --packed runs it)
  hbingest_packed  (not by default; --packed) `hbingest run` as hbingest, but its route packs each
            event into one cell (columns: [{from: kafka:value, to: "d:raw", type: bytes}]) instead
            of one text cell per top-level field

Measures events/s, wall time, client CPU seconds per million events, client peak RSS and the HBase
and Thrift2 JVMs' CPU over the same window; counts the rows after every run and checks a sample of
the Java peer's keys against `hbingest key build`. Any missing row or differing key fails the run.
After every run the table is flushed and its store files' size on disk taken. Nothing here asserts
a speed.

--packed runs hbingest and hbingest_packed over the same events, with each layout's ceiling (ceiling,
ceiling_packed), and reports, per row layout, events/s and its share of the layout's ceiling, the
HBase and gateway JVMs' CPU per million events, cells and value bytes per event and the store size
after the flush.

--sweep runs hbingest alone over writer settings; --queries adds a steady /v1/events load to the
daemon while it ingests. Results go to bench/RESULTS.md (or --out).

--link-latency MS puts a Toxiproxy server of the benchmark's own between every contender and the stack
(Kafka, the Thrift2 gateway, and for the Java peer ZooKeeper and the region servers), MS added each
way; --client-cpus LIST runs the contenders under `taskset -c LIST` (the stack keeps every core).
Every table gives each contender's events/s as a share of the ceiling of its row layout.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import http.client
import json
import os
import platform
import random
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CLK_TCK = os.sysconf("SC_CLK_TCK")
CONTENDERS = ("hbingest", "baseline", "hbingest_avro", "java", "ceiling", "hbingest_packed", "ceiling_packed")
DEFAULT_CONTENDERS = ("hbingest", "hbingest_avro", "java", "ceiling")
PACKED_CONTENDERS = ("hbingest", "hbingest_packed", "ceiling", "ceiling_packed")
# The row layout each contender writes, and the contender that is that layout's ceiling.
PACKED_LAYOUT = ("hbingest_packed", "ceiling_packed")
LAYOUT_CEILING = {"fields": "ceiling", "packed": "ceiling_packed"}
TOXIPROXY = REPO / ".tools" / "bin" / "toxiproxy-server"
# The packed route's one cell per event: the message value as received.
PACKED_COLUMNS = [{"from": "kafka:value", "to": "d:raw", "type": "bytes"}]
TTL_MS = 86_400_000  # 1 day: preloaded events must not expire (default 10 min) while the rounds run
TIME_SPREAD = "2m"


class BenchmarkBroken(RuntimeError):
    """Something is wrong with a contender's result (rows missing, keys differing): not a speed."""


def layout_of(contender: str) -> str:
    return "packed" if contender in PACKED_LAYOUT else "fields"


LOG_PREFIX = "compare"  # bench/tools/restart.py says "restart"


def log(message: str) -> None:
    print(f"{LOG_PREFIX}: {message}", file=sys.stderr, flush=True)


def run(cmd: list[str], **kwargs) -> str:
    result = subprocess.run(cmd, check=False, capture_output=True, text=True, **kwargs)
    if result.returncode != 0:
        raise RuntimeError(f"{shlex.join(cmd)} exited {result.returncode}:\n{result.stderr.strip()[-2000:]}")
    return result.stdout


# ------------------------------------------------------------------ process accounting


def proc_cpu_seconds(pid: int) -> float:
    """utime + stime of a live process (all its threads), from /proc/PID/stat."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2 :].split()
    return (int(fields[11]) + int(fields[12])) / CLK_TCK


def machine_busy_seconds() -> float:
    """Non-idle CPU seconds of all cores since boot, from /proc/stat: what the window's contenders and the
    stack together left no core for."""
    user, nice, system, _idle, _iowait, irq, softirq, steal = (
        int(x) for x in Path("/proc/stat").read_text().splitlines()[0].split()[1:9])
    return (user + nice + system + irq + softirq + steal) / CLK_TCK


def proc_peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    raise RuntimeError(f"no VmHWM for pid {pid}")


def wait_child(proc: subprocess.Popen) -> tuple[int, float, float]:
    """Reaps a child: (exit status, CPU seconds, peak RSS MiB) from wait4's rusage (NaN for a child
    that Popen.poll() already reaped)."""
    if proc.returncode is not None:
        return proc.returncode, float("nan"), float("nan")
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return proc.returncode, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024


@dataclass
class Stack:
    env: dict[str, str]
    state_dir: Path
    # Processes of the benchmark's own counted with the stack's (name -> pid): the link proxy.
    extra_pids: dict[str, int] = field(default_factory=dict)

    def store_bytes(self, table: str) -> tuple[int, int]:
        """(bytes, files) of the table's store files on local disk: the standalone HBase's root dir is
        file://$HBSTACK_DIR/data/hbase/root; a store is <region>/<family>/<hfile> under the table's
        directory (region and family directories also hold dot-files and .tmp, which are not data)."""
        table_dir = self.state_dir / "data" / "hbase" / "root" / "data" / "default" / table
        total = files = 0
        for region in table_dir.iterdir():
            if not region.is_dir() or region.name.startswith("."):
                continue
            for family in region.iterdir():
                if not family.is_dir() or family.name.startswith(".") or family.name == "recovered.edits":
                    continue
                for hfile in family.iterdir():
                    if hfile.is_file() and not hfile.name.startswith("."):
                        total += hfile.stat().st_size
                        files += 1
        return total, files

    def pid(self, component: str) -> int:
        return int((self.state_dir / "pids" / f"{component}.pid").read_text().strip())

    def jvm_cpu(self) -> dict[str, float]:
        """CPU seconds so far of the stack's JVMs, and of the whole machine ("machine": every busy core)."""
        cpu = {c: proc_cpu_seconds(self.pid(c)) for c in ("hbase", "thrift2", "kafka")}
        cpu.update({name: proc_cpu_seconds(pid) for name, pid in self.extra_pids.items()})
        cpu["machine"] = machine_busy_seconds()
        return cpu

    @property
    def kafka(self) -> str:
        return self.env["HBINGEST_KAFKA_BOOTSTRAP"]

    @property
    def thrift2(self) -> str:
        return self.env["HBINGEST_THRIFT2"]

    @property
    def zookeeper(self) -> str:
        return self.env["HBINGEST_ZK"]

    def region_servers(self) -> list[str]:
        """host:port of every live region server, as HBase publishes them (hbstack admin servers)."""
        out = run([str(REPO / "stack" / "hbstack"), "admin", "servers"])
        servers = []
        for line in out.splitlines():  # {"server":"127.0.0.1,19120,<start code>","port":19120,...}, then a summary
            entry = json.loads(line)
            if "server" in entry and "port" in entry:
                servers.append(f"{entry['server'].split(',')[0]}:{entry['port']}")
        if not servers:
            raise RuntimeError(f"hbstack admin servers named no region server:\n{out}")
        return servers


class LinkProxies:
    """--link-latency: a Toxiproxy server of the benchmark's own (scripts/install-deps.sh installs it, the
    fault tier uses it the same way) with a latency toxic of `ms` on each direction of every proxy.

    - Kafka: the broker's PROXIED listener advertises HBINGEST_KAFKA_VIA_PROXY, where the proxy listens,
      so a client bootstrapped there keeps every connection (fetches, the group coordinator, commits,
      the dead-letter producer) on the proxy.
    - The Thrift2 gateway: hbingest, its queries and the ceiling write through it.
    - ZooKeeper and each region server: the Java peer's HBase client talks to them directly; it finds the
      region servers in hbase:meta under their real addresses, so its sockets are redirected to the
      proxies by bench/peers/ProxiedSocketFactory (java_properties()).

    The benchmark's own reads (preload, verification, flush) go straight to the stack."""

    def __init__(self, stack: Stack, ms: int, log_path: Path):
        if not TOXIPROXY.exists():
            raise RuntimeError(f"{TOXIPROXY} is missing: run scripts/install-deps.sh")
        self.ms = ms
        self.api = f"http://127.0.0.1:{free_port()}"
        self.log = open(log_path, "ab")
        host, port = self.api.rsplit("/", 1)[1].split(":")
        self.process = subprocess.Popen([str(TOXIPROXY), "-host", host, "-port", port], stdout=self.log,
                                        stderr=subprocess.STDOUT)
        for _ in range(300):
            try:
                urllib.request.urlopen(self.api + "/version", timeout=1).read()
                break
            except OSError:
                if self.process.poll() is not None:
                    raise RuntimeError(f"toxiproxy-server exited {self.process.returncode} (log: {log_path})")
                time.sleep(0.05)
        else:
            raise RuntimeError(f"toxiproxy-server did not answer within 15 s (log: {log_path})")
        stack.extra_pids["toxiproxy"] = self.process.pid
        self.kafka = self.proxy("kafka", stack.env["HBINGEST_KAFKA_PROXIED"], stack.env["HBINGEST_KAFKA_VIA_PROXY"])
        self.thrift2 = self.proxy("thrift2", stack.thrift2)
        self.zookeeper = self.proxy("zookeeper", stack.zookeeper)
        self.region_servers = {server.rsplit(":", 1)[1]: self.proxy(f"regionserver_{i}", server)
                               for i, server in enumerate(stack.region_servers())}
        log(f"link latency {ms} ms each way through toxiproxy ({self.api}): kafka {self.kafka}, gateway "
            f"{self.thrift2}, zookeeper {self.zookeeper}, region servers "
            + ", ".join(f"{port} -> {p}" for port, p in self.region_servers.items()))

    def call(self, method: str, path: str, body: dict) -> None:
        request = urllib.request.Request(self.api + path, json.dumps(body).encode(), method=method,
                                         headers={"Content-Type": "application/json"})
        try:
            urllib.request.urlopen(request, timeout=10).read()
        except urllib.error.HTTPError as e:
            raise RuntimeError(f"toxiproxy {method} {path}: {e.code} {e.read().decode(errors='replace')}") from e

    def proxy(self, name: str, upstream: str, listen: str | None = None) -> str:
        listen = listen or f"127.0.0.1:{free_port()}"
        self.call("POST", "/proxies", {"name": name, "listen": listen, "upstream": upstream, "enabled": True})
        for stream in ("upstream", "downstream"):
            self.call("POST", f"/proxies/{name}/toxics",
                      {"name": f"latency_{stream}", "type": "latency", "stream": stream, "toxicity": 1.0,
                       "attributes": {"latency": self.ms, "jitter": 0}})
        return listen

    def java_properties(self) -> list[str]:
        """The JVM options that send the Java peer's region-server connections through the proxies."""
        return ["-Dbench.proxy.ports=" + ",".join(f"{port}={p}" for port, p in self.region_servers.items())]

    def close(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()


def stack_up() -> Stack:
    hbstack = str(REPO / "stack" / "hbstack")
    subprocess.run([hbstack, "up"], check=True, stdout=sys.stderr)
    env = dict(re.findall(r"^export (\w+)=(.*)$", run([hbstack, "env"]), re.M))
    return Stack(env=env, state_dir=Path(env["HBSTACK_DIR"]))


# ------------------------------------------------------------------ the contenders


@dataclass
class Result:
    contender: str
    round: int
    events: int
    seconds: float
    client_cpu: float
    peak_rss_mib: float
    jvm_cpu: dict[str, float]
    rows: int = 0
    cells: int = 0
    value_bytes: int = 0  # the sum of the stored cells' value lengths
    store_bytes: int = 0  # the table's store files on disk after the flush
    store_files: int = 0
    flush_seconds: float = 0.0
    flush_jvm_cpu: dict[str, float] = field(default_factory=dict)  # what the flush cost the JVMs
    extra: dict = field(default_factory=dict)

    @property
    def events_per_s(self) -> float:
        return self.events / self.seconds

    @property
    def cpu_per_million(self) -> float:
        return self.client_cpu / self.events * 1e6

    def jvm_per_million(self, component: str) -> float:
        return self.jvm_cpu[component] / self.events * 1e6


class Bench:
    def __init__(self, args: argparse.Namespace, stack: Stack, link: LinkProxies | None = None):
        self.args = args
        self.stack = stack
        # Where the contenders reach the stack: through the link proxies when --link-latency, else
        # directly (the benchmark's own preload, checks and flushes always go directly).
        self.link = link
        self.client_kafka = link.kafka if link else stack.kafka
        self.client_thrift2 = link.thrift2 if link else stack.thrift2
        self.client_zookeeper = link.zookeeper if link else stack.zookeeper
        # --client-cpus: the contenders (not the stack) on those cores only.
        self.pin = ["taskset", "-c", args.client_cpus] if args.client_cpus else []
        # --hbingest: another build's daemon (a "before" binary) against this tree's tools and ceiling.
        self.hb = str(Path(args.hbingest).resolve()) if args.hbingest else str(REPO / args.build_dir / "hbingest")
        self.ceiling = str(REPO / args.build_dir / "bench" / "putmultiple_ceiling")
        self.run_id = time.strftime("%Y%m%d%H%M%S")
        self.topic = f"cmp_{self.run_id}"
        self.tmp = Path(tempfile.mkdtemp(prefix="hbingest-compare-"))
        self.classpath = self.compile_peers()
        self.commands: list[str] = []  # what was run, for RESULTS.md
        # Per row layout, (contender, cells, SHA-256) of its first run: every later run of the layout
        # must store the same cells.
        self.cell_digest: dict[str, tuple[str, int, str]] = {}
        self.topic_value_bytes: int | None = None  # the preloaded messages' value bytes (--packed)

    # -- setup

    def compile_peers(self) -> str:
        """javac bench/peers/*.java against the classpath hbstack resolved (HBase + kafka-clients)."""
        stack_dir = REPO / "stack"
        kafka_jars = [
            jar
            for jar in (stack_dir / ".classpath-kafka.txt").read_text().strip().split(":")
            if re.search(r"/(kafka-clients|lz4-java|zstd-jni|snappy-java)-[0-9][^/]*\.jar$", jar)
        ]
        classes = REPO / self.args.build_dir / "bench" / "peers-classes"
        classpath = ":".join([(stack_dir / ".classpath-hbase.txt").read_text().strip(), *kafka_jars])
        sources = sorted((REPO / "bench" / "peers").glob("*.java"))
        newest = max(s.stat().st_mtime for s in sources)
        stamp = classes / ".stamp"
        if not stamp.exists() or stamp.stat().st_mtime < newest:
            classes.mkdir(parents=True, exist_ok=True)
            run(["javac", "-nowarn", "-encoding", "UTF-8", "-cp", classpath, "-d", str(classes), *map(str, sources)])
            stamp.touch()
        return f"{classes}:{classpath}"

    def java(self, main: str, *args: str, jvm_options: tuple[str, ...] = ()) -> list[str]:
        return ["java", "-Xmx512m", *jvm_options, "-cp", self.classpath, main, *args]

    def preload(self) -> None:
        cmd = [self.hb, "gen", "--brokers", self.stack.kafka, "--topic", self.topic, "--partitions",
               str(self.args.partitions), "--count", str(self.args.events), "--invalid-fraction", "0",
               "--time-spread", TIME_SPREAD]
        self.commands.append(shlex.join(cmd))
        log(f"preloading {self.args.events} events into {self.topic} ({self.args.partitions} partitions)")
        run(cmd)
        self.preloaded_at_ms = int(time.time() * 1000)

    def count_topic_value_bytes(self) -> None:
        """The preloaded messages' value lengths, summed: what a packed table's cells must hold."""
        from confluent_kafka import Consumer, TopicPartition

        consumer = Consumer({"bootstrap.servers": self.stack.kafka, "group.id": f"{self.topic}_sizes",
                             "enable.auto.commit": False, "auto.offset.reset": "earliest"})
        consumer.assign([TopicPartition(self.topic, p, 0) for p in range(self.args.partitions)])
        total = seen = 0
        while seen < self.args.events:
            for m in consumer.consume(10000, timeout=10):
                if m.error():
                    raise RuntimeError(f"reading {self.topic}: {m.error()}")
                total += len(m.value())
                seen += 1
        consumer.close()
        self.topic_value_bytes = total
        log(f"{self.topic}: {seen} messages, {total / seen:.1f} value bytes each")

    def preload_avro(self) -> None:
        """The preloaded events again as Confluent-framed Avro in {topic}_avro: each partition copied in
        order (same partitions, offsets, keys and timestamps, so the same row keys), each value
        converted by build/bench/format_events_tool (bench/format_events.h, the CPU-path bench's
        converter) with its schema registered in the stack's registry under {topic}_avro-<kind>-value."""
        from confluent_kafka import Consumer, Producer, TopicPartition
        from confluent_kafka.admin import AdminClient, NewTopic

        tool = str(REPO / self.args.build_dir / "bench" / "format_events_tool")
        registry = self.stack.env["HBINGEST_SCHEMA_REGISTRY"]
        self.avro_topic = f"{self.topic}_avro"
        ids = []
        for kind in ("login", "order"):
            body = json.dumps({"schema": run([tool, "schema", "avro", kind])}).encode()
            request = urllib.request.Request(f"{registry}/subjects/{self.avro_topic}-{kind}-value/versions", body,
                                             {"Content-Type": "application/vnd.schemaregistry.v1+json"})
            with urllib.request.urlopen(request, timeout=30) as answer:
                ids.append(str(json.load(answer)["id"]))
        log(f"preloading the same events as Avro into {self.avro_topic} (schema ids {', '.join(ids)})")
        admin = AdminClient({"bootstrap.servers": self.stack.kafka})
        admin.create_topics([NewTopic(self.avro_topic, self.args.partitions, 1)])[self.avro_topic].result()
        consumer = Consumer({"bootstrap.servers": self.stack.kafka, "group.id": f"{self.avro_topic}_copy",
                             "enable.auto.commit": False, "auto.offset.reset": "earliest"})
        consumer.assign([TopicPartition(self.topic, p, 0) for p in range(self.args.partitions)])
        messages = []
        while len(messages) < self.args.events:
            for m in consumer.consume(10000, timeout=10):
                if m.error():
                    raise RuntimeError(f"reading {self.topic}: {m.error()}")
                messages.append(m)
        consumer.close()
        values = b"".join(m.value() + b"\n" for m in messages)
        converted = subprocess.run([tool, "convert", "avro", *ids], input=values, stdout=subprocess.PIPE,
                                   check=True).stdout.split()
        # Idempotent, one request in flight per partition: each partition's order (and so each offset) kept.
        producer = Producer({"bootstrap.servers": self.stack.kafka, "enable.idempotence": True, "linger.ms": 20})
        for m, value in zip(messages, converted, strict=True):
            while True:
                try:
                    producer.produce(self.avro_topic, value=bytes.fromhex(value.decode()), key=m.key(),
                                     partition=m.partition(), timestamp=m.timestamp()[1])
                    break
                except BufferError:
                    producer.poll(0.1)
        if producer.flush(60):
            raise RuntimeError(f"producing {self.avro_topic}: messages left unsent")
        # Same offsets: the copy's end offsets equal the original's, partition by partition.
        consumer = Consumer({"bootstrap.servers": self.stack.kafka, "group.id": f"{self.avro_topic}_check"})
        for p in range(self.args.partitions):
            ends = [consumer.get_watermark_offsets(TopicPartition(t, p), timeout=10) for t in (self.topic, self.avro_topic)]
            if ends[0] != ends[1]:
                raise BenchmarkBroken(f"{self.avro_topic} partition {p}: offsets {ends[1]}, {self.topic} has {ends[0]}")
        consumer.close()
        self.commands.append(f"{tool} convert avro {' '.join(ids)}  # each event of {self.topic}, into {self.avro_topic}")

    def config(self, table: str, group: str, http_port: int, overrides: dict | None = None, avro: bool = False,
               packed: bool = False, direct: bool = False) -> Path:
        """The daemon's config: defaults, except where the benchmark must say where and how long.
        direct: the stack's own addresses, not the link proxies (the benchmark's bootstrap)."""
        writer = dict(overrides or {})
        cfg = {
            "kafka": {"bootstrap_servers": self.stack.kafka if direct else self.client_kafka, "group_id": group,
                      "topics": [self.avro_topic if avro else self.topic]},
            "hbase": {"endpoints": [self.stack.thrift2 if direct else self.client_thrift2]},
            "routes": [{"event_types": ["login", "order"], "table": table, "preset": "events",
                        "preset_params": {"buckets": str(self.args.buckets)}}],
            "table": {"ttl": f"{TTL_MS}ms"},
            "dlq": {"topic": f"{self.topic}_dlq"},
            "http": {"listen": f"127.0.0.1:{http_port}"},
            "logging": {"level": "warn"},
        }
        if writer:
            cfg["writer"] = writer
        if direct:
            # createTable of a table pre-split at 100 buckets can take longer than one call's default
            # 10 s on a loaded machine; it is the benchmark's setup, not a measurement.
            cfg["hbase"]["read_timeout"] = "120s"
        if packed:
            cfg["routes"][0]["columns"] = PACKED_COLUMNS
        if avro:
            cfg["decode"] = {"format": "avro"}
            cfg["schema_registry"] = {"url": self.stack.env["HBINGEST_SCHEMA_REGISTRY"]}
        if self.args.kafka_property:
            cfg["kafka"]["properties"] = dict(kv.split("=", 1) for kv in self.args.kafka_property)
        path = self.tmp / f"{table}.yaml"
        path.write_text(json.dumps(cfg, indent=1))  # JSON is YAML
        return path

    def writers(self, config: Path) -> int:
        """writer.writers as the daemon reads `config` (its default included), not a copy of it here."""
        effective = run([self.hb, "check-config", str(config), "--print-effective"])
        return int(re.search(r"^\s+writers: (\d+)$", effective, re.M).group(1))

    def fresh_table(self, table: str) -> None:
        run([self.hb, "bootstrap", "--config", str(self.config(table, "unused", 0, direct=True))])

    def drop_table(self, table: str) -> None:
        run(self.java("TableTool", self.stack.zookeeper, "drop", table))

    def verify_rows(self, table: str, contender: str) -> tuple[int, int, str, int]:
        """Rows, cells, the digest of every cell of the table and the cells' value bytes (TableTool
        cells); a row missing fails."""
        rows, cells, digest, value_bytes = run(self.java("TableTool", self.stack.zookeeper, "cells", table)).split()
        rows, cells, value_bytes = int(rows), int(cells), int(value_bytes)
        if rows != self.args.events:
            raise BenchmarkBroken(
                f"{contender}: table {table} holds {rows} rows, expected {self.args.events}: "
                f"{self.args.events - rows} row(s) missing")
        layout = layout_of(contender)
        if layout == "packed":
            # One cell per event holding the message value as received: as many cells as rows, and
            # as many value bytes as the topic's messages carry.
            if cells != rows or value_bytes != self.topic_value_bytes:
                raise BenchmarkBroken(
                    f"{contender}: table {table} holds {cells} cells of {value_bytes} value bytes in {rows} rows; "
                    f"packed rows must hold one cell each, {self.topic_value_bytes} value bytes in all (the topic's)")
        # Every contender of the run wrote the same events: its cells must be the first one's of the
        # same row layout, byte for byte (keys, families, qualifiers, timestamps, values).
        if layout not in self.cell_digest:
            self.cell_digest[layout] = (contender, cells, digest)
        elif (cells, digest) != self.cell_digest[layout][1:]:
            first, first_cells, first_digest = self.cell_digest[layout]
            raise BenchmarkBroken(
                f"{contender}: table {table} holds {cells} cells with digest {digest[:16]}..., but {first}'s "
                f"table held {first_cells} cells with digest {first_digest[:16]}...: the cells differ")
        return rows, cells, digest, value_bytes

    def flush(self, table: str, result: "Result") -> None:
        """Flushes the table's memstores and records its store files' size, the flush's time and what it
        cost the JVMs (outside the ingest window: the store files are written here, not during it)."""
        before = self.stack.jvm_cpu()
        started = time.monotonic()
        run(self.java("TableTool", self.stack.zookeeper, "flush", table))
        result.flush_seconds = time.monotonic() - started
        after = self.stack.jvm_cpu()
        result.flush_jvm_cpu = {k: after[k] - before[k] for k in ("hbase", "thrift2")}
        result.store_bytes, result.store_files = self.stack.store_bytes(table)

    # -- one run of each contender

    def run_hbingest_avro(self, table: str, rnd: int) -> Result:
        result = self.run_hbingest(table, rnd, avro=True)
        result.contender = "hbingest_avro"
        return result

    def run_baseline(self, table: str, rnd: int) -> Result:
        """--baseline: another build's daemon (the commit before a change), the default config, in the
        same rounds as this one so both meet the same machine."""
        result = self.run_hbingest(table, rnd, binary=str(Path(self.args.baseline).resolve()))
        result.contender = "baseline"
        return result

    def run_hbingest_packed(self, table: str, rnd: int) -> Result:
        result = self.run_hbingest(table, rnd, packed=True)
        result.contender = "hbingest_packed"
        return result

    def run_hbingest(self, table: str, rnd: int, overrides: dict | None = None, query_load: "QueryLoad | None" = None,
                     avro: bool = False, packed: bool = False, binary: str | None = None) -> Result:
        port = free_port()
        config = self.config(table, f"cmp_{self.run_id}_{table}", port, overrides, avro, packed)
        cmd = [*self.pin, binary or self.hb, "run", "--config", str(config)]
        jvm_before = self.stack.jvm_cpu()
        started = time.monotonic()
        daemon_log = self.tmp / f"{table}.log"
        with open(daemon_log, "w") as log_file:
            proc = subprocess.Popen(cmd, stdout=log_file, stderr=subprocess.STDOUT)
        try:
            if query_load:
                wait_http(port, proc)
                query_load.start(port)
            inflight_samples = []
            progress = []  # (seconds since start, rows stored)
            while True:
                scrape = Scrape(port)
                if (done := int(scrape.sum("hbingest_rows_written_all_total"))) >= self.args.events:
                    break
                progress.append((time.monotonic() - started, done))
                inflight_samples.append(scrape.sum("hbingest_inflight_events"))
                if os.environ.get("COMPARE_TRACE"):
                    log(f"trace {progress[-1][0]:.2f} s rows {done} inflight {inflight_samples[-1]:.0f} bytes "
                        f"{scrape.sum('hbingest_inflight_bytes'):.0f} paused {scrape.sum('hbingest_paused_partitions'):.0f}")
                if proc.poll() is not None:
                    raise RuntimeError(f"hbingest run exited {proc.returncode} after {done} rows ({config}):\n"
                                       + daemon_log.read_text()[-2000:])
                invalid = scrape.sum("hbingest_dead_letters_total") + scrape.sum("hbingest_events_invalid_total")
                if invalid:
                    raise BenchmarkBroken(f"hbingest: {invalid:.0f} event(s) invalid or dead-lettered ({config})")
                time.sleep(0.1)
            seconds = time.monotonic() - started
            jvm_after = self.stack.jvm_cpu()
            cpu, rss = proc_cpu_seconds(proc.pid), proc_peak_rss_mib(proc.pid)
            progress.append((seconds, done))
            extra = {"writers": writer_stats(port, seconds, self.writers(config), inflight_samples),
                     "progress": progress_stats(progress, self.args.events)}
            if query_load:
                extra["queries_during_ingest"] = query_load.stop()
                # The same load against the same daemon once it has nothing left to ingest, with
                # what each answered query cost the daemon, HBase and the gateway in CPU.
                idle_cpu_before, idle_jvm_before = proc_cpu_seconds(proc.pid), self.stack.jvm_cpu()
                query_load.start(port)
                time.sleep(self.args.query_seconds)
                idle = query_load.stop()
                idle_jvm_after = self.stack.jvm_cpu()
                idle["cpu_ms_per_query"] = {
                    "hbingest": 1000 * (proc_cpu_seconds(proc.pid) - idle_cpu_before) / idle["queries"],
                    **{k: 1000 * (idle_jvm_after[k] - idle_jvm_before[k]) / idle["queries"]
                       for k in ("hbase", "thrift2")}}
                extra["queries_idle"] = idle
        finally:
            proc.terminate()
            status, _, _ = wait_child(proc)
        if status != 0:
            raise RuntimeError(f"hbingest run exited {status} on SIGTERM ({config})")
        self.commands.append(shlex.join(cmd))
        return Result("hbingest", rnd, self.args.events, seconds, cpu, rss,
                      {k: jvm_after[k] - jvm_before[k] for k in jvm_after}, extra=extra)

    def run_java(self, table: str, rnd: int) -> Result:
        sample = self.tmp / f"{table}.sample.tsv"
        cmd = self.pin + self.java("KafkaToHBase", "--brokers", self.client_kafka, "--topic", self.topic, "--group",
                                   f"cmp_{self.run_id}_{table}", "--zookeeper", self.client_zookeeper, "--table",
                                   table, "--events", str(self.args.events), "--buckets", str(self.args.buckets),
                                   "--ttl-ms", str(TTL_MS), "--sample-file", str(sample), "--sample-every",
                                   str(max(1, self.args.events // self.args.key_samples)),
                                   jvm_options=tuple(self.link.java_properties()) if self.link else ())
        jvm_before = self.stack.jvm_cpu()
        started = time.monotonic()
        err_file = self.tmp / f"{table}.stderr"
        with open(err_file, "w") as err:
            proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
            status, cpu, rss = wait_child(proc)
        seconds = time.monotonic() - started
        jvm_after = self.stack.jvm_cpu()
        if status != 0:
            raise RuntimeError(f"java peer exited {status}:\n{err_file.read_text()[-2000:]}")
        self.check_keys(sample)
        self.commands.append(shlex.join(cmd))
        return Result("java", rnd, self.args.events, seconds, cpu, rss,
                      {k: jvm_after[k] - jvm_before[k] for k in jvm_after})

    def check_keys(self, sample: Path) -> None:
        """Every sampled key of the Java peer must equal `hbingest key build` for the same message."""
        lines = sample.read_text().splitlines()
        if not lines:
            raise BenchmarkBroken("java peer wrote no key samples")
        for line in lines:
            partition, offset, peer_hex, event = line.split("\t", 3)
            out = run([self.hb, "key", "build", "--preset", "events", "--param", f"buckets={self.args.buckets}",
                       "--event", event, "--topic", self.topic, "--partition", partition, "--offset", offset])
            ours = re.search(r"^hex:\s+([0-9a-f]+)", out, re.M).group(1)
            if ours != peer_hex:
                raise BenchmarkBroken(f"java peer key differs at partition {partition} offset {offset}: "
                                      f"peer {peer_hex}, hbingest key build {ours} (event {event})")
        log(f"java peer: {len(lines)} sampled keys equal `hbingest key build`")

    def run_ceiling_packed(self, table: str, rnd: int) -> Result:
        result = self.run_ceiling(table, rnd, packed=True)
        result.contender = "ceiling_packed"
        return result

    def run_ceiling(self, table: str, rnd: int, packed: bool = False) -> Result:
        cmd = [*self.pin, self.ceiling, "--brokers", self.client_kafka, "--topic", self.topic, "--thrift2",
               self.client_thrift2, "--table", table, "--events", str(self.args.events), "--buckets",
               str(self.args.buckets), "--ttl-ms", str(TTL_MS), *(["--packed"] if packed else [])]
        # The loader reads and prebuilds before its clock starts; the JVMs' window is its write phase,
        # which it announces on stderr.
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        jvm_before = jvm_after = None
        err_lines = []
        for line in proc.stderr:
            err_lines.append(line)
            if line.startswith("putmultiple_ceiling: writing"):
                jvm_before = self.stack.jvm_cpu()
            elif line.startswith("putmultiple_ceiling: written"):  # the window ends with the write phase
                jvm_after = self.stack.jvm_cpu()
        out = proc.stdout.read()
        status, _, _ = wait_child(proc)
        jvm_after = jvm_after or self.stack.jvm_cpu()
        if status != 0 or jvm_before is None:
            raise RuntimeError(f"putmultiple_ceiling exited {status}:\n{''.join(err_lines)[-2000:]}")
        report = json.loads([l for l in out.splitlines() if l.startswith("{")][-1])  # after any log lines
        self.commands.append(shlex.join(cmd))
        return Result("ceiling", rnd, self.args.events, report["write_seconds"], report["write_cpu_seconds"],
                      report["peak_rss_kib"] / 1024, {k: jvm_after[k] - jvm_before[k] for k in jvm_after})

    def one(self, contender: str, rnd: int, label: str = "", **kwargs) -> Result:
        # The table name also names the consumer group: unique per run, or a later run would find
        # every offset already committed.
        table = f"cmp_{self.run_id}_{contender}{label}_{rnd}"
        self.fresh_table(table)
        try:
            result = getattr(self, f"run_{contender}")(table, rnd, **kwargs)
            self.flush(table, result)
            result.rows, result.cells, _, result.value_bytes = self.verify_rows(table, contender)
        finally:
            self.drop_table(table)
        log(f"round {rnd} {contender:8} {result.events_per_s:9.0f} events/s  {result.seconds:6.1f} s  "
            f"{result.cpu_per_million:5.1f} CPU s/M  peak RSS {result.peak_rss_mib:6.0f} MiB  "
            f"HBase {result.jvm_cpu['hbase']:.1f} s, gateway {result.jvm_cpu['thrift2']:.1f} s, "
            f"Kafka {result.jvm_cpu['kafka']:.1f} s CPU, machine {result.jvm_cpu['machine'] / result.seconds:.2f} "
            f"cores busy  "
            f"rows {result.rows} ok, {result.cells / result.rows:.2f} cells each, store "
            f"{result.store_bytes / 2**20:.1f} MiB in {result.store_files} files after a {result.flush_seconds:.1f} s flush")
        if "writers" in result.extra:
            w = result.extra["writers"]
            log(f"  writers: {w['batches']} batches of {w['mean_batch_rows']:.0f} rows, {w['mean_write_ms']:.1f} ms "
                f"each, busy {w['writers_busy']:.0%}, mean in flight {w['mean_inflight_events']:.0f} events; "
                f"first row stored at {result.extra['progress']['first_row_s']:.1f} s, "
                f"{result.extra['progress']['steady_events_per_s']:.0f} events/s from 10 % to 90 % of the rows")
        return result


# ------------------------------------------------------------------ HTTP helpers


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Scrape:
    """One read of the daemon's /metrics (empty while it does not answer). One read per look: the
    daemon renders every series for each, and its CPU is what the benchmark measures."""

    def __init__(self, port: int):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as response:
                self.text = response.read().decode()
        except OSError:
            self.text = ""

    def sum(self, name: str) -> float:
        """Sum of a metric family's samples."""
        return sum(float(m) for m in re.findall(rf"^{name}(?:{{[^}}]*}})? (\S+)$", self.text, re.M))


def progress_stats(progress: list[tuple[float, int]], events: int) -> dict:
    """When the first row was stored (the consumer group's join and the first fetch come before it)
    and the rate between 10 % and 90 % of the rows, which neither start nor drain shapes."""
    def when(rows: float) -> float:
        return next(t for t, done in progress if done >= rows)
    first, lo, hi = when(1), when(0.1 * events), when(0.9 * events)
    return {"first_row_s": first, "steady_events_per_s": 0.8 * events / (hi - lo) if hi > lo else float("nan")}


def writer_stats(port: int, seconds: float, writers: int, inflight_samples: list[int]) -> dict:
    """How the daemon's writers spent the run: the busy share says whether they, or what feeds them,
    set the rate."""
    scrape = Scrape(port)
    batches = scrape.sum("hbingest_batch_rows_count")
    latency_sum = scrape.sum("hbingest_write_latency_seconds_sum")
    return {
        "batches": int(batches),
        "mean_batch_rows": scrape.sum("hbingest_batch_rows_sum") / batches if batches else 0.0,
        "mean_write_ms": 1000 * latency_sum / batches if batches else 0.0,
        "writers_busy": latency_sum / (writers * seconds),
        "mean_inflight_events": statistics.mean(inflight_samples) if inflight_samples else 0.0,
    }


def wait_http(port: int, proc: subprocess.Popen) -> None:
    for _ in range(600):
        if proc.poll() is not None:
            raise RuntimeError(f"hbingest run exited {proc.returncode} before its HTTP port answered")
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=1).read()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError("hbingest run: HTTP port did not answer within 30 s")


class QueryLoad:
    """An open-loop query load: `rate` GET /v1/events per second, each a random 1-minute range of
    the preloaded events' time spread. Latency counts from the scheduled start, so a stalled server
    cannot hide its backlog (no coordinated omission)."""

    def __init__(self, rate: float, window_start_ms: int, window_end_ms: int, limit: int = 1000):
        self.rate = rate
        self.limit = limit
        self.window = (window_start_ms, window_end_ms - 60_000)
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=32)
        self.rng = random.Random(1)

    def start(self, port: int) -> None:
        self.port, self.stopping, self.latencies, self.errors = port, threading.Event(), [], []
        self.futures: list[concurrent.futures.Future] = []
        self.thread = threading.Thread(target=self.schedule, daemon=True)
        self.thread.start()

    def schedule(self) -> None:
        t0 = time.monotonic()
        n = 0
        while not self.stopping.is_set():
            due = t0 + n / self.rate
            time.sleep(max(0.0, due - time.monotonic()))
            start = self.rng.randint(*self.window)
            self.futures.append(self.pool.submit(self.query, due, start))
            n += 1

    def query(self, due: float, start_ms: int) -> None:
        path = f"/v1/events?event_id=login&from={start_ms}&to={start_ms + 60_000}&limit={self.limit}"
        try:
            conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
            conn.request("GET", path)
            response = conn.getresponse()
            response.read()
            conn.close()
            if response.status != 200:
                self.errors.append(response.status)
                return
            self.latencies.append((time.monotonic() - due) * 1000)
        except OSError as e:
            self.errors.append(str(e))

    def stop(self) -> dict:
        self.stopping.set()
        self.thread.join()
        concurrent.futures.wait(self.futures)
        lat = sorted(self.latencies)
        if not lat:
            raise BenchmarkBroken(f"no query answered (errors: {self.errors[:5]})")
        if self.errors:
            log(f"query errors: {collections.Counter(map(str, self.errors)).most_common(5)}")
        return {"queries": len(lat), "errors": len(self.errors), "p50_ms": percentile(lat, 50),
                "p99_ms": percentile(lat, 99)}


def percentile(sorted_values: list[float], p: float) -> float:
    k = max(0, min(len(sorted_values) - 1, round(p / 100 * len(sorted_values) + 0.5) - 1))
    return sorted_values[k]


# ------------------------------------------------------------------ report


def machine() -> dict[str, str]:
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    mem = int(next(l.split()[1] for l in open("/proc/meminfo") if l.startswith("MemTotal"))) / 1024 / 1024
    os_name = next((l.split("=", 1)[1].strip().strip('"') for l in open("/etc/os-release")
                    if l.startswith("PRETTY_NAME=")), platform.system())
    return {"cores": str(os.cpu_count()), "memory": f"{mem:.0f} GiB", "cpu": cpu, "os": os_name}


def versions(build_dir: str) -> dict[str, str]:
    def first(cmd: list[str], pattern: str) -> str:
        try:
            out = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True).stdout
            m = re.search(pattern, out, re.M)
            return m.group(1) if m else "?"
        except OSError:
            return "?"

    classpath = (REPO / "stack" / ".classpath-kafka.txt").read_text() + (REPO / "stack" / ".classpath-hbase.txt").read_text()
    kafka = re.search(r"kafka-clients-([\d.]+)\.jar", classpath)
    hbase = re.search(r"hbase-client-([\w.-]+)\.jar", classpath)
    cache = (REPO / build_dir / "CMakeCache.txt").read_text()
    compiler = re.search(r"^CMAKE_CXX_COMPILER:\w+=(.*)$", cache, re.M).group(1)
    return {
        "Kafka": kafka.group(1) if kafka else "?",
        "HBase": hbase.group(1) if hbase else "?",
        "librdkafka": first(["dpkg-query", "-W", "-f", "${Version}\n", "librdkafka1"], r"^(\S+)"),
        "compiler": first([compiler, "--version"], r"^(.*)$"),
        "JDK": first(["java", "-version"], r"^(?:openjdk|java) version \"?([^\"\s]+)") or "?",
        "build type": re.search(r"^CMAKE_BUILD_TYPE:\w+=(.*)$", cache, re.M).group(1),
        "git commit": run(["git", "-C", str(REPO), "rev-parse", "--short", "HEAD"]).strip()
        + (" (dirty)" if run(["git", "-C", str(REPO), "status", "--porcelain", "-uno"]).strip() else ""),
    }


def hbingest_version(binary: str) -> str:
    """What a daemon binary says of itself, when it was linked, and the commit of the checkout holding it
    (the binary carries no commit of its own: it was built there at or before that commit)."""
    version = run([binary, "--version"]).strip()
    linked = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(Path(binary).stat().st_mtime))
    try:
        commit = run(["git", "-C", str(Path(binary).resolve().parent), "rev-parse", "--short", "HEAD"]).strip()
        return f"{version}, linked {linked}, in a checkout now at {commit}"
    except (RuntimeError, OSError):
        return f"{version}, linked {linked}"


def mmm(values: list[float], fmt: str) -> str:
    return " / ".join(format(v, fmt) for v in (min(values), statistics.median(values), max(values)))


def ceiling_medians(results: list[Result]) -> dict[str, float]:
    """Per row layout, the median events/s of its ceiling's runs (absent when the ceiling did not run)."""
    return {layout: statistics.median([r.events_per_s for r in results if r.contender == ceiling])
            for layout, ceiling in LAYOUT_CEILING.items() if any(r.contender == ceiling for r in results)}


def of_ceiling(events_per_s: float, layout: str, ceilings: dict[str, float]) -> str:
    """events/s as a share of the layout's median ceiling, for a table cell ("" without a ceiling)."""
    return f"{events_per_s / ceilings[layout]:.2f}" if layout in ceilings else "—"


def setting(args, who: str = "contenders") -> str:
    """The link and core settings of the run, for the report."""
    hbase = "the gateway; for the Java peer ZooKeeper and the region servers" if who == "contenders" else "the gateway"
    link = (f"the {who}' links to Kafka and to HBase ({hbase}) through Toxiproxy with {args.link_latency} ms added "
            "each way"
            if args.link_latency else f"the {who} on loopback to the stack (no added latency)")
    cpus = (f"the {who} pinned to CPU(s) {args.client_cpus} (`taskset -c`; the stack on every core)"
            if args.client_cpus else f"the {who} on every core")
    return f"Setting: {link[0].upper()}{link[1:]}; {cpus}."


def report(args, bench: Bench, results: list[Result], sweep: list[tuple[dict, Result]], queries: list[Result]) -> str:
    digests = "; ".join(f"{layout}: SHA-256 {d[2]}" for layout, d in bench.cell_digest.items())
    ceilings = ceiling_medians(results)
    lines = [
        "# Ingest comparison (`bench/compare.sh`)",
        "",
        f"Run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}."
        + (f" **{args.note}**" if args.note else ""),
        "",
        "| machine | |", "|---|---|",
        *(f"| {k} | {v} |" for k, v in machine().items()),
        *(f"| {k} | {v} |" for k, v in versions(args.build_dir).items()),
        "",
        f"{args.events:,} login/order events (no invalid ones) in {args.partitions} partitions, "
        f"`events` key preset with {args.buckets} salt buckets, each run into a freshly bootstrapped table "
        f"pre-split at the buckets, after {args.warmup_runs} uncounted warm-up run(s) of {args.warmup_with} (the JVMs' JIT), "
        f"TTL {TTL_MS // 3_600_000} h (the preloaded events must not expire "
        "during the rounds; everything else is the default config). After every run the table's rows are "
        "counted and every cell digested (row, family, qualifier, timestamp, value): every run's cells must "
        "equal the first run's of the same row layout (fields: one text cell per top-level field; packed: "
        "one cell per event), byte for byte" + (f" ({digests})" if digests else "") + ". Then the table is "
        "flushed and its store files measured on disk.",
        "",
        setting(args),
        "",
        "Command:",
        "",
        "```",
        "bench/compare.sh " + shlex.join(sys.argv[1:]),
        "```",
        *([f"", f"hbingest measured: `{bench.hb}` ({hbingest_version(bench.hb)})."]
          if args.hbingest or args.baseline else []),
        *([f"", f"baseline measured: `{args.baseline}` ({hbingest_version(args.baseline)})."] if args.baseline else []),
    ]
    if results:
        lines += [
            "",
            f"## Contenders, {args.rounds} round(s), min / median / max",
            "",
            "| contender | events/s | / ceiling of its layout (medians) | wall s | client CPU s per M events "
            "| client peak RSS MiB | HBase JVM CPU s | gateway JVM CPU s | Kafka JVM CPU s "
            + ("| toxiproxy CPU s " if args.link_latency else "") + "| machine busy cores |",
            "|---|---|---|---|---|---|---|---|---|---|" + ("---|" if args.link_latency else ""),
        ]
        for c in CONTENDERS:
            rs = [r for r in results if r.contender == c]
            if not rs:
                continue
            lines.append(
                f"| {c} | {mmm([r.events_per_s for r in rs], ',.0f')} "
                f"| {of_ceiling(statistics.median([r.events_per_s for r in rs]), layout_of(c), ceilings)} "
                f"| {mmm([r.seconds for r in rs], '.1f')} "
                f"| {mmm([r.cpu_per_million for r in rs], '.1f')} | {mmm([r.peak_rss_mib for r in rs], '.0f')} "
                f"| {mmm([r.jvm_cpu['hbase'] for r in rs], '.1f')} | {mmm([r.jvm_cpu['thrift2'] for r in rs], '.1f')} "
                f"| {mmm([r.jvm_cpu['kafka'] for r in rs], '.1f')} "
                + (f"| {mmm([r.jvm_cpu['toxiproxy'] for r in rs], '.1f')} " if args.link_latency else "")
                + f"| {mmm([r.jvm_cpu['machine'] / r.seconds for r in rs], '.2f')} |")
        med = {c: statistics.median([r.events_per_s for r in results if r.contender == c])
               for c in CONTENDERS if any(r.contender == c for r in results)}
        if "hbingest" in med:
            lines += [""]
            for other in ("baseline", "java", "ceiling"):
                if other in med:
                    lines.append(f"- hbingest / {other} (median events/s): **{med['hbingest'] / med[other]:.2f}**")
            if "hbingest_packed" in med and "ceiling_packed" in med:
                lines.append(f"- hbingest_packed / ceiling_packed (median events/s): "
                             f"**{med['hbingest_packed'] / med['ceiling_packed']:.2f}**")
            if "hbingest_avro" in med:
                cpu = {c: statistics.median([r.cpu_per_million for r in results if r.contender == c])
                       for c in ("hbingest", "hbingest_avro")}
                lines.append(f"- hbingest, the same events as Avro / as JSON: median events/s "
                             f"**{med['hbingest_avro'] / med['hbingest']:.2f}**, daemon CPU per event (median) "
                             f"**{cpu['hbingest_avro']:.2f} µs / {cpu['hbingest']:.2f} µs**")
        lines += [
            "",
            "hbingest and java: wall time from process start until every event is stored (hbingest: its "
            "`hbingest_rows_written_all_total`; java: the process exits after its last flush and commit), "
            "CPU and peak RSS (VmHWM) of the process. ceiling: the write phase only — it reads the topic and "
            "builds every batch before its clock starts, so its peak RSS holds all rows at once and says "
            "nothing about a streaming client. JVM CPU: utime+stime of the HBase (master + region servers) "
            "and Thrift2 gateway processes and the Kafka broker over the same window. Machine busy cores: all non-idle "
            "CPU time of the machine (/proc/stat) over the window, divided by its length (2.00 = every core busy). "
            "/ ceiling: the contender's median events/s over the median of the ceiling of its row layout (fields: "
            "`ceiling`; packed: `ceiling_packed`), per run over the same round's ceiling."
            + (" Toxiproxy CPU: the link proxy's process (it copies every byte of the contenders' links, on the same "
               "cores)." if args.link_latency else ""),
            "",
            "Per run:",
            "",
            "| round | contender | events/s | / ceiling of its layout, same round | wall s | CPU s/M | peak RSS MiB "
            "| rows | cells | store MiB after flush |",
            "|---|---|---|---|---|---|---|---|---|---|",
            *(f"| {r.round} | {r.contender} | {r.events_per_s:,.0f} | {round_ratio(r, results)} | {r.seconds:.1f} "
              f"| {r.cpu_per_million:.1f} | {r.peak_rss_mib:.0f} | {r.rows:,} | {r.cells:,} "
              f"| {r.store_bytes / 2**20:.1f} |" for r in results),
        ]
        lines += packed_report(results)
    if sweep:
        lines += [
            "",
            "## Sweep: hbingest writer settings (`--sweep`)",
            "",
            "| max_inflight_rows | max_inflight_bytes | batch_max_rows | writers | events/s "
            "| / ceiling (median of the rounds' ceiling runs) | peak RSS MiB | CPU s/M |",
            "|---|---|---|---|---|---|---|---|",
            *(f"| {o['max_inflight_rows']:,} | {o['max_inflight_bytes'] // 2**20} MiB | {o['batch_max_rows']} "
              f"| {o['writers']} | {r.events_per_s:,.0f} | {of_ceiling(r.events_per_s, 'fields', ceilings)} "
              f"| {r.peak_rss_mib:.0f} | {r.cpu_per_million:.1f} |"
              for o, r in sweep),
        ]
    if queries:
        plain = [r.events_per_s for r in results if r.contender == "hbingest"]
        lines += [
            "",
            f"## Queries during ingest (`--queries`): {args.query_rate:g} GET /v1/events per second",
            "",
            f"Each query: `event_id=login`, a random 1-minute range of the events' time spread, `limit={args.query_limit}`, "
            "open loop (latency from the scheduled start). The same daemon: first while it ingests, then for "
            f"{args.query_seconds:g} s once everything is stored.",
            "",
            "| round | ingest events/s with queries | / ceiling (median) | ingest events/s without (same run's "
            "hbingest rounds, median) | query p50 / p99 ms during ingest | query p50 / p99 ms idle "
            "| queries (errors) during / idle | CPU ms per idle query: hbingest / HBase / gateway |",
            "|---|---|---|---|---|---|---|---|",
        ]
        for r in queries:
            d, i = r.extra["queries_during_ingest"], r.extra["queries_idle"]
            ratio = of_ceiling(r.events_per_s, "fields", ceilings)
            lines.append(
                f"| {r.round} | {r.events_per_s:,.0f} | {ratio} | {statistics.median(plain):,.0f} |" if plain else
                f"| {r.round} | {r.events_per_s:,.0f} | {ratio} | (not run) |")
            lines[-1] += (f" {d['p50_ms']:.0f} / {d['p99_ms']:.0f} | {i['p50_ms']:.0f} / {i['p99_ms']:.0f} "
                          f"| {d['queries']} ({d['errors']}) / {i['queries']} ({i['errors']}) "
                          f"| {i['cpu_ms_per_query']['hbingest']:.1f} / {i['cpu_ms_per_query']['hbase']:.1f} "
                          f"/ {i['cpu_ms_per_query']['thrift2']:.1f} |")
    return "\n".join(lines) + "\n"


def round_ratio(r: Result, results: list[Result]) -> str:
    """A run's events/s over the same round's run of its layout's ceiling ("—" without one)."""
    ceiling = LAYOUT_CEILING[layout_of(r.contender)]
    same = [c.events_per_s for c in results if c.contender == ceiling and c.round == r.round]
    return f"{r.events_per_s / same[0]:.2f}" if same else "—"


# ------------------------------------------------------------------ main


def packed_report(results: list[Result]) -> list[str]:
    """The same events as one text cell per field (hbingest) and as one cell per event
    (hbingest_packed), side by side: what packing saves HBase per event."""
    layouts = {"fields": [r for r in results if r.contender == "hbingest"],
               "packed": [r for r in results if r.contender == "hbingest_packed"]}
    if not all(layouts.values()):
        return []

    def med(rs: list[Result], f) -> float:
        return statistics.median([f(r) for r in rs])

    metrics = [  # (label, per run, format)
        ("events/s", lambda r: r.events_per_s, ",.0f"),
        ("HBase JVM CPU s per M events (master + region servers)", lambda r: r.jvm_per_million("hbase"), ".1f"),
        ("gateway (Thrift2) JVM CPU s per M events", lambda r: r.jvm_per_million("thrift2"), ".1f"),
        ("HBase + gateway CPU s per M events", lambda r: r.jvm_per_million("hbase") + r.jvm_per_million("thrift2"), ".1f"),
        ("hbingest CPU s per M events", lambda r: r.cpu_per_million, ".1f"),
        ("cells per event", lambda r: r.cells / r.rows, ".2f"),
        ("value bytes per event", lambda r: r.value_bytes / r.rows, ".1f"),
        ("store MiB after flush", lambda r: r.store_bytes / 2**20, ".1f"),
        ("store bytes per event after flush", lambda r: r.store_bytes / r.rows, ".0f"),
        ("store files", lambda r: r.store_files, ".0f"),
        ("flush s", lambda r: r.flush_seconds, ".1f"),
        ("HBase JVM CPU s per M events in the flush", lambda r: r.flush_jvm_cpu["hbase"] / r.events * 1e6, ".1f"),
    ]
    lines = [
        "",
        "## Packed rows against fields (`--packed`)",
        "",
        "The same events written by `hbingest run` twice per round: **fields**, the default row mapping (one "
        "text cell per top-level field, family `d`), and **packed**, a route with "
        "`columns: [{from: kafka:value, to: \"d:raw\", type: bytes}]` (the message value as received, one "
        "cell per event). Min / median / max over the rounds; the last column is packed / fields of the medians.",
        "",
        "| per layout | fields | packed | packed / fields |",
        "|---|---|---|---|",
    ]
    for label, f, fmt in metrics:
        fields, packed = (med(layouts[k], f) for k in ("fields", "packed"))
        lines.append(f"| {label} | {mmm([f(r) for r in layouts['fields']], fmt)} "
                     f"| {mmm([f(r) for r in layouts['packed']], fmt)} "
                     f"| {packed / fields:.2f} |" if fields else f"| {label} | 0 | {packed:{fmt}} | |")
    # Each layout against its own ceiling: prebuilt putMultiple batches of the same rows (the packed
    # one's from putmultiple_ceiling --packed).
    ceilings = {k: [r for r in results if r.contender == c] for k, c in LAYOUT_CEILING.items()}
    if all(ceilings.values()):
        ceiling = {k: med(rs, lambda r: r.events_per_s) for k, rs in ceilings.items()}
        share = {k: med(layouts[k], lambda r: r.events_per_s) / ceiling[k] for k in layouts}
        lines += [
            f"| ceiling events/s (`ceiling`, `ceiling_packed`) | {mmm([r.events_per_s for r in ceilings['fields']], ',.0f')} "
            f"| {mmm([r.events_per_s for r in ceilings['packed']], ',.0f')} | {ceiling['packed'] / ceiling['fields']:.2f} |",
            f"| events/s / the layout's ceiling (medians) | **{share['fields']:.2f}** | **{share['packed']:.2f}** "
            f"| {share['packed'] / share['fields']:.2f} |",
        ]
    lines += [
        "",
        "JVM CPU: utime+stime (`/proc/PID/stat`) of the HBase JVM (the master and the region servers: one process in the stack) and the "
        "Thrift2 gateway over the ingest window, per million events. Cells and value bytes: read back from the "
        "table (`TableTool cells`); a packed table must hold one cell per row and exactly the topic's value "
        "bytes. Store: the table's HFiles on the standalone HBase's local disk (`<root>/data/default/<table>/"
        "<region>/<family>/`) after `Admin.flush` and the region servers report its memstores empty, with the "
        "table's settings (`table.compression` NONE, no data block encoding, ROW bloom filter: the defaults); "
        "one file per pre-split region, so each file's fixed part (trailer, indexes, bloom) is in the figure. "
        "The flush is outside the ingest window; its CPU is the last row.",
    ]
    return lines


def sweep_grid(args) -> list[dict]:
    grid = []
    for inflight in args.sweep_inflight:
        for rows in args.sweep_batch_rows:
            for writers in args.sweep_writers:
                # The byte bound scales with the row bound: ~1.3 KiB held per typical event (7x its
                # ~180-byte payload, docs/architecture.md), doubled for headroom.
                grid.append({"max_inflight_rows": inflight, "max_inflight_bytes": max(inflight * 2730, 2**20),
                             "max_inflight_rows_per_partition": inflight, "batch_max_rows": rows,
                             "writers": writers})
    return grid


def main() -> int:
    p = argparse.ArgumentParser(prog="bench/compare.sh", description=__doc__.split("\n\n")[0])
    p.add_argument("--events", type=int, default=500_000)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--warmup-runs", type=int, default=1, help="uncounted runs before the rounds (JIT warm-up)")
    p.add_argument("--warmup-with", choices=CONTENDERS, default=None,
                   help="the contender of the warm-up runs (default: ceiling; with --packed: hbingest)")
    p.add_argument("--partitions", type=int, default=12)
    p.add_argument("--buckets", type=int, default=100, help="salt buckets (the events preset's default: 100)")
    p.add_argument("--contenders", default=None,
                   help=f"comma-separated subset of {','.join(CONTENDERS)} (default: {','.join(DEFAULT_CONTENDERS)}; "
                   f"with --packed: {','.join(PACKED_CONTENDERS)})")
    p.add_argument("--packed", action="store_true",
                   help="packed rows against fields: hbingest and hbingest_packed (one cell per event) over the same "
                   "events, compared per layout (HBase CPU per event, events/s, cells, store size after a flush), "
                   "each against its layout's ceiling (ceiling, ceiling_packed)")
    p.add_argument("--link-latency", type=int, default=0, metavar="MS",
                   help="MS added each way on every contender's link to Kafka and to HBase (Toxiproxy latency toxics; "
                   "whole milliseconds)")
    p.add_argument("--client-cpus", default="", metavar="LIST",
                   help="run hbingest, the Java peer and the ceiling under `taskset -c LIST` (e.g. 0: one core); "
                   "the stack is not pinned")
    p.add_argument("--key-samples", type=int, default=50, help="java peer keys checked against `hbingest key build`")
    p.add_argument("--sweep", action="store_true", help="also sweep hbingest's writer settings (one run each)")
    p.add_argument("--sweep-inflight", type=lambda s: [int(x) for x in s.split(",")], default=[5000, 20000, 200000])
    p.add_argument("--sweep-batch-rows", type=lambda s: [int(x) for x in s.split(",")], default=[100, 500, 2000])
    p.add_argument("--sweep-writers", type=lambda s: [int(x) for x in s.split(",")], default=[1, 2, 4, 8])
    p.add_argument("--queries", action="store_true", help="also run hbingest under a steady query load")
    p.add_argument("--query-rate", type=float, default=20.0)
    p.add_argument("--query-limit", type=int, default=1000, help="each query's limit= (the rows it returns at most)")
    p.add_argument("--query-seconds", type=float, default=15.0, help="idle query phase after ingest")
    p.add_argument("--kafka-property", action="append", default=[], metavar="KEY=VALUE",
                   help="librdkafka consumer property for every hbingest run (repeatable), e.g. to try prefetch bounds")
    p.add_argument("--build-dir", default="build")
    p.add_argument("--hbingest", default="", metavar="PATH",
                   help="the hbingest binary to measure (default: BUILD_DIR/hbingest), e.g. a build of the commit "
                   "before a change; the ceiling, the Java peer and the tools stay this tree's")
    p.add_argument("--baseline", default="", metavar="PATH",
                   help="contender `baseline`: this hbingest binary (e.g. a build of the commit before a change), "
                   "run in the same rounds as `hbingest` so that both meet the same machine")
    p.add_argument("--out", default="bench/RESULTS.md")
    p.add_argument("--note", default="", help="a remark printed under the date (e.g. 'machine shared')")
    args = p.parse_args()
    if args.warmup_with is None:
        args.warmup_with = "hbingest" if args.packed else "ceiling"
    if args.contenders is None:
        args.contenders = ",".join(PACKED_CONTENDERS if args.packed else DEFAULT_CONTENDERS)
    contenders = [c for c in args.contenders.split(",") if c]
    if unknown := set(contenders) - set(CONTENDERS):
        p.error(f"unknown contender(s): {', '.join(sorted(unknown))}")
    if ("baseline" in contenders or args.warmup_with == "baseline") != bool(args.baseline):
        p.error("--baseline PATH and the contender `baseline` (in --contenders or --warmup-with) go together")
    if args.query_limit < 1:
        p.error("--query-limit: 1 or more (and at most the daemon's query.max_limit)")
    if args.packed and not {"hbingest", "hbingest_packed"} <= set(contenders):
        p.error("--packed compares hbingest with hbingest_packed: --contenders must name both")
    if args.link_latency < 0:
        p.error("--link-latency: milliseconds, 0 or more")
    if args.client_cpus:
        try:
            run(["taskset", "-c", args.client_cpus, "true"])
        except (RuntimeError, OSError) as e:
            p.error(f"--client-cpus {args.client_cpus}: taskset refused it: {e}")

    stack = stack_up()
    link = LinkProxies(stack, args.link_latency, Path(tempfile.gettempdir()) / f"compare-toxiproxy-{os.getpid()}.log") \
        if args.link_latency else None
    try:
        return run_rounds(args, contenders, stack, link)
    finally:
        if link:
            link.close()


def run_rounds(args, contenders: list[str], stack: Stack, link: LinkProxies | None) -> int:
    bench = Bench(args, stack, link)
    bench.preload()
    if "hbingest_avro" in contenders:
        bench.preload_avro()
    if {*contenders, args.warmup_with} & set(PACKED_LAYOUT):
        bench.count_topic_value_bytes()
    results, sweep, queries = [], [], []
    out = REPO / args.out

    def write_report() -> None:  # after every round, so an interrupted run still leaves its numbers
        out.write_text(report(args, bench, results, sweep, queries))

    try:
        # The stack's JVMs compile their write paths on the first heavy run: a contender that came
        # first after the stack started (or the gateway restarted) paid ~2x the gateway's CPU
        # (13 s against 5.4 s). Uncounted runs of the ceiling warm them for every contender.
        for i in range(args.warmup_runs if contenders else 0):
            log(f"warm-up run {i + 1} of {args.warmup_runs} ({args.warmup_with}, not counted)")
            bench.one(args.warmup_with, 0, label=f"_warmup{i}")
        for rnd in range(1, args.rounds + 1 if contenders else 1):
            # Rotate the order each round so no contender always runs first (cold) or last.
            shift = (rnd - 1) % len(contenders)
            for contender in contenders[shift:] + contenders[:shift]:
                results.append(bench.one(contender, rnd))
            if args.queries:
                load = QueryLoad(args.query_rate, bench.preloaded_at_ms - 120_000, bench.preloaded_at_ms, args.query_limit)
                queries.append(bench.one("hbingest", rnd, label="_queries", query_load=load))
                log(f"round {rnd} queries during ingest {queries[-1].extra['queries_during_ingest']}, "
                    f"idle {queries[-1].extra['queries_idle']}")
            write_report()
        if args.sweep:
            for i, overrides in enumerate(sweep_grid(args)):
                log(f"sweep {overrides}")
                sweep.append((overrides, bench.one("hbingest", 0, label=f"_sweep{i}", overrides=overrides)))
                write_report()
    except BenchmarkBroken as e:
        print(f"compare: BROKEN: {e}", file=sys.stderr)
        return 1
    write_report()
    log(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
