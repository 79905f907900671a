"""The schema registry stopped, slow and answering 500s while Avro events with new schema ids arrive
(issue 23). Schemas are registered before each fault, as producers do it; the events naming them
arrive while the registry cannot answer. Promise: nothing lost, nothing dead-lettered, the waiting
partition resumes by itself, other partitions and cached ids go on meanwhile, /readyz says why.
An id the registry answers 404 for is the only one dead-lettered, with the id in its letter.

Only the registry is struck, so the file runs beside others, except those using the registry
(RESOURCE_LOCK registry in tests/integration/CMakeLists.txt). Registry traffic goes through a
Toxiproxy proxy (latency) whose upstream can be switched to a server that answers 500 to everything. HBINGEST_REGISTRY_OUTAGE_S (default 60) is how long it stays down."""

import http.server
import io
import json
import os
import subprocess
import threading
import time
import urllib.parse
import urllib.request

import fastavro
from confluent_kafka.schema_registry import Schema

import schema_peers
from support import STACK, consume_all, create_topic, free_port, holding_stopped, now_ms, produce, unique, wait_for
from toxiproxy import toxic

OUTAGE_S = int(os.environ.get("HBINGEST_REGISTRY_OUTAGE_S", "60"))


def avro_schema(name, extra_field):
    return {"type": "record", "name": name, "namespace": "hbingest.faults",
            "fields": [{"name": "event_id", "type": "string"},
                       {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-millis"}},
                       {"name": "user_id", "type": "string"},
                       {"name": extra_field, "type": "int"}]}


def framed(schema_id, schema, records):
    """Confluent-framed Avro written with fastavro, naming `schema_id`: a producer whose serializer
    registered the schema earlier (the daemon has not seen the id yet)."""
    parsed = fastavro.parse_schema(schema)
    out = []
    for record in records:
        buffer = io.BytesIO()
        buffer.write(b"\x00" + schema_id.to_bytes(4, "big"))
        fastavro.schemaless_writer(buffer, parsed, record)
        out.append(buffer.getvalue())
    return out


def records(extra_field, start, count, ts):
    return [{"event_id": "login", "ts": ts + i, "user_id": "u%d" % (start + i), extra_field: start + i}
            for i in range(count)]


class FailingRegistry:
    """An HTTP server that answers every request with a 500, as a registry whose storage failed."""

    def __init__(self):
        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = b'{"error_code":50001,"message":"Error in the backend data store"}'
                self.send_response(500)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Handler)
        self.address = "127.0.0.1:%d" % self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


def readyz(daemon):
    try:
        with urllib.request.urlopen(daemon.http + "/readyz", timeout=2) as r:
            return r.status, r.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_registry_stopped_slow_and_failing_loses_nothing_and_dead_letters_nothing(daemon_factory, proxies, tmp_path):
    topic, table = unique("t"), unique("tbl")
    dlq = topic + "_dlq"
    create_topic(topic, partitions=2)
    create_topic(dlq, partitions=1)
    registry_url = urllib.parse.urlsplit(schema_peers.registry_url())
    proxied = proxies.proxy("registry", registry_url.netloc)
    registry = schema_peers.client()

    def register(name, extra):
        schema = avro_schema(name, extra)
        return registry.register_schema("%s-%s" % (topic, name), Schema(json.dumps(schema), "AVRO")), schema

    cached_id, cached = register("Cached", "n")
    base = now_ms() - 1000
    produce(topic, framed(cached_id, cached, records("n", 0, 20, base)), partition_of=lambda i: 0)
    produce(topic, framed(cached_id, cached, records("n", 100, 20, base)), partition_of=lambda i: 1)
    daemon = daemon_factory(topic, table, **{
        "dlq.topic": dlq, "decode.format": "avro",
        "schema_registry.url": "http://%s%s" % (proxied, registry_url.path),
        "schema_registry.timeout": "1s"}).start()
    rows = lambda: daemon.metric("hbingest_rows_written_total")  # noqa: E731
    committed = lambda p: daemon.metric("hbingest_committed_offset", {"topic": topic, "partition": str(p)})  # noqa: E731
    wait_for(lambda: rows() >= 40, 60, "the first events stored")

    # 1. Stopped: events with a new id on partition 0 (and cached ones behind them), cached ids on 1.
    new_id, new = register("New", "m")
    # This file runs beside others (RESOURCE_LOCK registry keeps the registry's other users away): a
    # file starting meanwhile must not take the stopped registry for one an earlier file forgot.
    with holding_stopped("registry"):
        subprocess.run([STACK, "stop", "registry"], check=True, capture_output=True)
        stopped_at = time.monotonic()
        try:
            produce(topic, framed(new_id, new, records("m", 20, 30, base)) +
                    framed(cached_id, cached, records("n", 50, 10, base)), partition_of=lambda i: 0)
            produce(topic, framed(cached_id, cached, records("n", 120, 30, base)), partition_of=lambda i: 1)
            wait_for(lambda: rows() >= 70 and committed(1) >= 50, 30, "partition 1 (cached id) stored meanwhile",
                     )
            wait_for(lambda: daemon.metric("hbingest_partitions_waiting_for_schema") == 1, 30, "partition 0 held")
            status, body = readyz(daemon)
            assert status == 503 and "schema registry" in body and "schema id %d" % new_id in body, (status, body)
            time.sleep(max(0.0, OUTAGE_S - (time.monotonic() - stopped_at)))
            assert rows() == 70, "nothing of partition 0 past the held message is stored out of order"
            assert committed(0) == 20, "nothing at or past the held message is committed"
            assert daemon.metric("hbingest_schema_fetch_failures_total") >= 1
        finally:
            subprocess.run([STACK, "start", "registry"], check=True, capture_output=True)
    wait_for(lambda: rows() >= 110 and committed(0) >= 60, 90, "partition 0 resumed by itself")
    wait_for(lambda: daemon.ready(), 30, "/readyz ready again")
    assert daemon.metric("hbingest_partitions_waiting_for_schema") == 0

    # 2. Slow: every answer 3 s late, the daemon's timeout 1 s.
    slow_id, slow = register("Slow", "s")
    with toxic(proxies, "registry", "latency", latency=3000):
        produce(topic, framed(slow_id, slow, records("s", 60, 10, base)), partition_of=lambda i: 0)
        wait_for(lambda: daemon.metric("hbingest_partitions_waiting_for_schema") == 1, 30, "held while slow")
        time.sleep(3)
        assert committed(0) == 60
    wait_for(lambda: rows() >= 120 and committed(0) >= 70, 60, "resumed once the registry is fast again")

    # 3. Failing: the registry answers 500 to everything.
    failing_id, failing = register("Failing", "f")
    failing_registry = FailingRegistry()
    try:
        proxies._call("POST", "/proxies/registry", {"upstream": failing_registry.address})
        produce(topic, framed(failing_id, failing, records("f", 70, 10, base)), partition_of=lambda i: 0)
        wait_for(lambda: daemon.metric("hbingest_partitions_waiting_for_schema") == 1, 30, "held on 500s")
        status, body = readyz(daemon)
        assert status == 503 and "500" in body, body
        assert committed(0) == 70
    finally:
        proxies._call("POST", "/proxies/registry", {"upstream": registry_url.netloc})
        failing_registry.close()
    wait_for(lambda: rows() >= 130 and committed(0) >= 80, 60, "resumed once the registry answers again")

    # Nothing was dead-lettered through all of it; an id the registry does not know is, with the id.
    assert consume_all(dlq, 1, timeout=3) == []
    produce(topic, framed(2_000_000_000, cached, records("n", 0, 1, base)), partition_of=lambda i: 1)
    letters = consume_all(dlq, 1, timeout=30)
    assert len(letters) == 1
    headers = {k: v.decode() for k, v in letters[0].headers()}
    assert headers["__connect.errors.exception.class.name"] == "hbingest.decode.unknown_schema"
    assert headers["__hbingest.errors.schema.id"] == "2000000000"
    daemon.stop()
