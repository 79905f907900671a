"""Shared helpers for the end-to-end tests: our daemon as a subprocess, independent Kafka and HBase
peers (confluent-kafka, happybase over HBase's Thrift1 server), unique names per test."""

import contextlib
import json
import os
import random
import re
import signal
import socket
import string
import subprocess
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

import happybase
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic


def env(name):
    value = os.environ.get(name)
    if not value:
        raise RuntimeError(f"{name} is not set: run the tests through scripts/test.sh (it starts the stack)")
    return value


KAFKA = lambda: env("HBINGEST_KAFKA_BOOTSTRAP")  # noqa: E731
THRIFT2 = lambda: env("HBINGEST_THRIFT2")  # noqa: E731
# The broker's PROXIED listener and the address it advertises, where a fault test's proxy listens.
KAFKA_PROXIED = lambda: env("HBINGEST_KAFKA_PROXIED")  # noqa: E731
KAFKA_VIA_PROXY = lambda: env("HBINGEST_KAFKA_VIA_PROXY")  # noqa: E731
THRIFT1 = lambda: env("HBINGEST_THRIFT1")  # noqa: E731
BINARY = lambda: env("HBINGEST_BIN")  # noqa: E731
STACK = str(Path(__file__).resolve().parents[3] / "stack" / "hbstack")


def unique(prefix):
    return prefix + "_" + "".join(random.choices(string.ascii_lowercase + string.digits, k=8))


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def now_ms():
    return int(time.time() * 1000)


def rss_kib(pid):
    """Resident memory of a process, from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def wait_for(predicate, timeout, what, interval=0.2):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(interval)
    raise AssertionError(f"timed out after {timeout}s waiting for {what}")


# ---- Kafka peer ---------------------------------------------------------------------------------

def create_topic(name, partitions=4, config=None):
    admin = AdminClient({"bootstrap.servers": KAFKA()})
    futures = admin.create_topics([NewTopic(name, num_partitions=partitions, replication_factor=1,
                                            config=config or {})])
    for future in futures.values():
        future.result(timeout=30)


def produce(topic, payloads, partition_of=None):
    """Produces raw payloads (bytes or str); returns [(partition, offset)] in order."""
    producer = Producer({"bootstrap.servers": KAFKA(), "linger.ms": 5, "message.max.bytes": 10 * 1024 * 1024,
                         "acks": "all", "enable.idempotence": True})
    positions = [None] * len(payloads)

    def on_delivery(index):
        def callback(err, msg):
            if err is not None:
                raise RuntimeError(f"delivery failed: {err}")
            positions[index] = (msg.partition(), msg.offset())
        return callback

    for i, payload in enumerate(payloads):
        kwargs = {}
        if partition_of is not None:
            kwargs["partition"] = partition_of(i)
        while True:
            try:
                producer.produce(topic, payload, on_delivery=on_delivery(i), **kwargs)
                break
            except BufferError:
                producer.poll(0.1)
        producer.poll(0)
    remaining = producer.flush(60)
    assert remaining == 0, f"{remaining} messages not delivered"
    return positions


def produce_in_background(topic, events, chunks=10, pause=0.5):
    """Produces `events` in chunks over a few seconds, so the daemon is mid-stream when we strike."""
    def run():
        size = len(events) // chunks
        for i in range(chunks):
            produce(topic, [json.dumps(e) for e in events[i * size:(i + 1) * size]])
            time.sleep(pause)
    thread = threading.Thread(target=run)
    thread.start()
    return thread


# A member killed -9 (or ended by a second stop signal) never leaves its group: the broker hands
# its partitions on when its session times out. 6 s, the broker's minimum, instead of librdkafka's
# 45 s default, so a test whose next member takes over waits for that and not for the default.
SHORT_SESSION = {"kafka.properties": {"session.timeout.ms": "6000", "heartbeat.interval.ms": "1000"}}


def consume_all(topic, expected, timeout=60):
    """Reads `expected` messages from the start of `topic` with a throw-away group."""
    consumer = Consumer({"bootstrap.servers": KAFKA(), "group.id": unique("reader"),
                         "auto.offset.reset": "earliest", "enable.auto.commit": False})
    consumer.subscribe([topic])
    messages = []
    deadline = time.time() + timeout
    try:
        while len(messages) < expected and time.time() < deadline:
            msg = consumer.poll(0.5)
            if msg is None or msg.error():
                continue
            messages.append(msg)
    finally:
        consumer.close()
    return messages


def login(ts, user="u000001", **extra):
    event = {"event_id": "login", "ts": ts, "user_id": user, "ip": "10.0.0.1", "device": "ios", "success": True}
    event.update(extra)
    return event


def order(ts, user="u000001", **extra):
    event = {"event_id": "order", "ts": ts, "user_id": user, "order_id": "o" + str(random.randrange(10**9)),
             "amount": round(random.uniform(1, 500), 2), "currency": "EUR", "status": "paid",
             "items": [{"sku": "sku-1", "qty": 2}]}
    event.update(extra)
    return event


def mixed_events(count, ts_base=None):
    ts_base = ts_base or now_ms()
    events = []
    for i in range(count):
        ts = ts_base - random.randrange(0, 120_000)
        user = "u%06d" % random.randrange(5000)
        events.append(login(ts, user) if i % 3 else order(ts, user))
    return events


def group_committed(group, topic):
    """Sum over `topic`'s partitions of `group`'s committed next-offsets (0 where none), read from
    the broker by a consumer that never joins the group."""
    consumer = Consumer({"bootstrap.servers": KAFKA(), "group.id": group, "enable.auto.commit": False})
    try:
        partitions = consumer.list_topics(topic, timeout=10).topics[topic].partitions
        committed = consumer.committed([TopicPartition(topic, p) for p in partitions], timeout=10)
        return sum(max(tp.offset, 0) for tp in committed)
    finally:
        consumer.close()


class CommitWatch:
    """Reads a group's committed offsets every 200 ms (without joining the group) and records every
    partition whose committed offset went backwards."""

    def __init__(self, group, topic, partitions):
        self.partitions = [TopicPartition(topic, p) for p in range(partitions)]
        self.consumer = Consumer({"bootstrap.servers": KAFKA(), "group.id": group, "enable.auto.commit": False})
        self.lock = threading.Lock()
        self.highest = [-1] * partitions
        self.regressions = []
        self.step = "start"
        self.stopped = threading.Event()
        self.thread = threading.Thread(target=self._run)
        self.thread.start()

    def read(self):
        """The committed offsets now (-1: none), after checking them against the highest seen."""
        with self.lock:
            committed = self.consumer.committed(self.partitions, timeout=10)
            offsets = []
            for tp in committed:
                assert tp.error is None, f"reading committed offsets: {tp.error}"
                offset = max(tp.offset, -1)  # OFFSET_INVALID (-1001): nothing committed
                if offset < self.highest[tp.partition]:
                    self.regressions.append(f"partition {tp.partition}: {self.highest[tp.partition]} -> {offset} "
                                            f"during '{self.step}'")
                self.highest[tp.partition] = max(self.highest[tp.partition], offset)
                offsets.append(offset)
            return offsets

    def end_offsets(self):
        with self.lock:
            return [self.consumer.get_watermark_offsets(tp, timeout=10)[1] for tp in self.partitions]

    def _run(self):
        while not self.stopped.wait(0.2):
            self.read()

    def close(self):
        self.stopped.set()
        self.thread.join()
        self.consumer.close()


# ---- HBase peer (happybase over Thrift1) --------------------------------------------------------

def hbase():
    host, port = THRIFT1().rsplit(":", 1)
    return happybase.Connection(host, int(port), timeout=60000, autoconnect=True)


def scan_all(table, columns=None):
    connection = hbase()
    try:
        return list(connection.table(table).scan(columns=columns, batch_size=1000))
    finally:
        connection.close()


def count_rows(table):
    # One cell per row: a wide row (thousands of cells) would otherwise travel whole through Thrift1.
    connection = hbase()
    try:
        return sum(1 for _ in connection.table(table).scan(filter=b"FirstKeyOnlyFilter()", batch_size=5000))
    finally:
        connection.close()


def java_cells(table, types=(), all_versions=False, timeout=120):
    """Every cell of `table` as a Java application reads it: `stack/hbstack cells` (stack/README.md,
    "Cell reader"), HBase's Java client and Bytes.toX. `types` are "family:qualifier=type" or
    "family:*=type" (long int short double float boolean bigdecimal string text bytes). Returns one
    dict per cell, in scan order: row and value_hex (hex), family, qualifier, timestamp, and for a
    typed cell type and value (Bytes.toX; doubles and floats as Python floats, NaN and the
    infinities as the strings "NaN", "Infinity", "-Infinity", a bigdecimal as BigDecimal.toString())
    or error. Raises when the reader fails."""
    command = [STACK, "cells", table, *(["--all-versions"] if all_versions else []), *types]
    done = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
    lines = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    if done.returncode != 0 or not lines or lines[-1].get("ok") is not True:
        raise RuntimeError(f"hbstack cells {table} failed (exit {done.returncode}): {done.stdout[-2000:]}"
                           f"{done.stderr[-2000:]} (see logs/cells.log)")
    return lines[:-1]


# Rows of the `events` preset (keyspec docs): salt | event_id padded to 16 | time | partition (4
# digits) | offset (19 digits). These read a key from its end, independently of our decoder.
def key_position(key):
    """(partition, offset) of an `events` row key."""
    return int(key[-23:-19]), int(key[-19:])


def stored_positions(table):
    """(partition, offset) of every row of an `events` table, one per row, as HBase returns them."""
    connection = hbase()
    try:
        scan = connection.table(table).scan(filter=b"KeyOnlyFilter() AND FirstKeyOnlyFilter()", batch_size=5000)
        return [key_position(key) for key, _ in scan]
    finally:
        connection.close()


def brute_force_rows(table):
    """Every row of an `events` table through happybase, decoded from its cells and key."""
    rows = []
    for key, cells in scan_all(table):
        partition, offset = key_position(key)
        rows.append({"key": key.hex(), "event_id": cells[b"d:event_id"].decode(), "ts": int(cells[b"d:ts"]),
                     "partition": partition, "offset": offset})
    return rows


def brute_force_answer(rows, event_id, start, stop, limit, order):
    """The keys /v1/events must answer, from brute_force_rows: merged by (time, partition, offset)."""
    selected = [r for r in rows if r["event_id"] == event_id and start <= r["ts"] < stop]
    selected.sort(key=lambda r: (r["ts"], r["partition"], r["offset"]), reverse=(order == "desc"))
    return [r["key"] for r in selected[:limit]]


def query_events(daemon, timeout=30, **params):
    """GET /v1/events; returns (status, body) for errors too."""
    url = daemon.http + "/v1/events?" + urllib.parse.urlencode(params)
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


# ---- our daemon ---------------------------------------------------------------------------------

def write_config(path, topic, table, group=None, **overrides):
    """A daemon config for the test stack; `overrides` are dotted keys, e.g. {"table.ttl": "5s"}."""
    config = {
        "kafka": {"bootstrap_servers": KAFKA(), "group_id": group or unique("group"), "topics": [topic],
                  "commit_interval": "200ms", "statistics_interval": "1s"},
        "hbase": {"endpoints": [THRIFT2()], "read_timeout": "5s", "connect_timeout": "1s"},
        "writer": {"writers": 2, "linger": "20ms", "retry_initial_backoff": "50ms", "retry_max_backoff": "1s"},
        "routes": [{"event_types": ["login", "order"], "table": table, "preset": "events",
                    "preset_params": {"buckets": "8"}}],
        "table": {"ttl": "10m", "create_table": True},
        "dlq": {"topic": topic + "_dlq"},
        "http": {"listen": f"127.0.0.1:{free_port()}"},
        "logging": {"level": "info"},
        "shutdown_deadline": "10s",
    }
    for dotted, value in overrides.items():
        node = config
        *parents, leaf = dotted.split(".")
        for key in parents:
            node = node.setdefault(key, {})
        node[leaf] = value
    Path(path).write_text(json.dumps(config, indent=2))  # JSON is YAML
    return config


class Daemon:
    """`hbingest run` (or `serve`) as a child process with its log in a file."""

    def __init__(self, config_path, config, log_path, command="run", env=None):
        self.command = command
        self.env = env
        self.config_path = str(config_path)
        self.config = config
        self.http = "http://" + config["http"]["listen"]
        self.log_path = log_path
        self.process = None

    def start(self):
        self.log = open(self.log_path, "ab")
        self.process = subprocess.Popen([BINARY(), self.command, "--config", self.config_path],
                                        stdout=self.log, stderr=subprocess.STDOUT,
                                        env={**os.environ, **(self.env or {})})
        wait_for(lambda: self.healthy() or self.process.poll() is not None, 30, "daemon /healthz")
        assert self.process.poll() is None, f"daemon exited: {self.log_text()[-3000:]}"
        return self

    def _answers_200(self, path):
        try:
            return urllib.request.urlopen(self.http + path, timeout=2).status == 200
        except OSError:  # refused, timed out, or an HTTP error status such as 503
            return False

    def healthy(self):
        return self._answers_200("/healthz")

    def ready(self):
        return self._answers_200("/readyz")

    def metrics_text(self):
        return urllib.request.urlopen(self.http + "/metrics", timeout=5).read().decode()

    def metric(self, name, labels=None):
        """Sum of a metric's samples whose labels include `labels`."""
        total = 0.0
        for line in self.metrics_text().splitlines():
            if line.startswith("#"):
                continue
            match = re.match(r"^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{[^}]*\})?\s+(\S+)$", line)
            if not match or match.group(1) != name:
                continue
            if labels and not all(f'{k}="{v}"' in (match.group(2) or "") for k, v in labels.items()):
                continue
            total += float(match.group(3))
        return total

    def stop(self, timeout=30):
        if self.process and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            code = self.process.wait(timeout)
            assert code == 0, f"daemon exited {code}: {self.log_text()[-3000:]}"

    def kill(self):
        if self.process and self.process.poll() is None:
            self.process.kill()
            self.process.wait(10)

    def log_text(self):
        return Path(self.log_path).read_text(errors="replace")

    def diagnosis(self, metric_prefixes=("hbingest_committed_offset", "hbingest_consumer_lag",
                                         "hbingest_paused_partitions", "hbingest_inflight_",
                                         "hbingest_events_consumed_total", "hbingest_rows_written_total",
                                         "hbingest_commit_failures_total", "hbingest_kafka_commit_failures_total")):
        """What a failed wait needs to be understood from CI's output alone: the named metrics'
        samples and the end of the daemon's log."""
        try:
            samples = [line for line in self.metrics_text().splitlines()
                       if line.startswith(metric_prefixes)]
        except OSError as error:
            samples = [f"/metrics unreadable: {error}"]
        return "\n".join(samples) + "\n--- end of the daemon's log ---\n" + self.log_text()[-6000:]


def serve(tmp_path, table, name="serve", **overrides):
    """`hbingest serve` (queries only) over `table`, started."""
    config_path = tmp_path / f"{name}.yaml"
    config = write_config(config_path, unique("unused"), table, **overrides)
    return Daemon(config_path, config, tmp_path / f"{name}.log", command="serve").start()


def run_hbingest(*args, check=True, timeout=120):
    result = subprocess.run([BINARY(), *args], capture_output=True, text=True, timeout=timeout)
    if check and result.returncode != 0:
        raise AssertionError(f"hbingest {' '.join(args)} exited {result.returncode}:\n{result.stdout}\n{result.stderr}")
    return result


def stack_status():
    """Each component of the shared stack, with the pid `hbstack status` shows it running as, or None."""
    out = subprocess.run([STACK, "status"], capture_output=True, text=True).stdout
    rows = [line.split() for line in out.splitlines()[1:]]
    return {row[0]: int(row[2]) if row[1] == "running" else None for row in rows if len(row) >= 3}


KERBEROS_COMPONENTS = ("kdc", "hbasekrb", "thrift2krb")


def _held_dir():
    return Path(env("HBSTACK_DIR")) / "held-by-tests"


@contextlib.contextmanager
def holding_stopped(component):
    """Marks `component` as stopped on purpose by this file while the block runs, for a file that
    runs beside others (not RUN_SERIAL) and stops a component only the files sharing its
    RESOURCE_LOCK use: a file starting meanwhile (restore_stack) leaves it stopped. The mark names
    this process, so one left by a process that is gone counts for nothing."""
    held = _held_dir()
    held.mkdir(exist_ok=True)
    mark = held / component
    mark.write_text(str(os.getpid()))
    try:
        yield
    finally:
        mark.unlink(missing_ok=True)


def held_components():
    """{component: pid} of the components a running test process keeps stopped on purpose."""
    held = {}
    if _held_dir().is_dir():
        for mark in _held_dir().iterdir():
            try:
                pid = int(mark.read_text())
            except (OSError, ValueError):
                continue  # being written or removed
            if Path(f"/proc/{pid}").exists():
                held[mark.name] = pid
    return held


def restore_stack():
    """Starts again what an earlier test file left stopped, and says so. The fault and robustness
    files stop and restart parts of the stack; one failed restart used to fail every file after it
    ("Connection refused" on the gateway), which hid the one that broke it. A stack that is down
    as a whole was never started: that is said, not repaired."""
    status = stack_status()
    # The Kerberos components (HBSTACK_KERBEROS=1) are stopped and started by test_kerberos.py while
    # other files run beside it; that file restores them itself.
    status = {c: pid for c, pid in status.items() if c not in KERBEROS_COMPONENTS}
    stopped = [component for component, pid in status.items() if pid is None]
    if stopped and len(stopped) == len(status):
        raise RuntimeError("the test stack is down: start it with `stack/hbstack up` (scripts/test.sh does)")
    held = held_components()
    for component in stopped:
        if component in held:
            print(f"\nNOTE: {component} is stopped on purpose by the test process {held[component]} running beside "
                  f"this file; left stopped", flush=True)
            continue
        print(f"\nWARNING: {component} was not running when this test file started (an earlier file "
              f"left it stopped); starting it again", flush=True)
        subprocess.run([STACK, "start", component], check=True)
    return stopped
