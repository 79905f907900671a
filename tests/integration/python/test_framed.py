"""hbase.transport: framed against HBase's own framed Thrift2 gateway (stack/hbstack's on-demand
thrift2framed, HBase's default 2 MiB frames). One valid event of 85,000 fields makes a put above the
frame; the gateway drops such a request with its connection. Before the fix the writer retried it as
a transport error forever and the partition stopped committing at that event."""

import json
import subprocess

import pytest

from support import STACK, consume_all, count_rows, create_topic, env, login, now_ms, produce, run_hbingest, \
    wait_for, write_config


@pytest.fixture(scope="module")
def framed_gateway():
    subprocess.run([STACK, "start", "thrift2framed"], check=True, capture_output=True)
    yield env("HBINGEST_THRIFT2_FRAMED")
    subprocess.run([STACK, "stop", "thrift2framed"], check=True, capture_output=True)


def test_an_event_above_the_gateways_frame_is_dead_lettered_and_its_partition_commits(
        daemon_factory, names, tmp_path, framed_gateway):
    topic, table, dlq = names["topic"], names["table"], names["dlq"]
    create_topic(topic, partitions=1)
    create_topic(dlq, partitions=1)
    # The table through the buffered gateway: HBase 2.6 cannot pre-split over framed.
    write_config(tmp_path / "bootstrap.yaml", topic, table)
    run_hbingest("bootstrap", "--config", str(tmp_path / "bootstrap.yaml"))

    # ~0.85 MB of JSON (under Kafka's and decode.max_event_bytes' 1 MB), one cell per field: the
    # put is ~2.5 MB.
    wide = {"event_id": "login", "ts": now_ms() - 1000, **{"%x" % i: i % 10 for i in range(85_000)}}
    payloads = [json.dumps(login(now_ms() - 1000, "u%d" % i)) for i in range(100)]
    payloads.insert(50, json.dumps(wide, separators=(",", ":")))
    positions = produce(topic, payloads, partition_of=lambda i: 0)

    daemon = daemon_factory(topic, table, **{
        "hbase.endpoints": [framed_gateway], "hbase.transport": "framed",
        "writer.batch_max_bytes": "1MiB",  # with its encoding below the 2 MiB frame (check-config)
        "table.create_table": False}).start()
    wait_for(lambda: daemon.metric("hbingest_committed_offset", {"topic": topic, "partition": "0"}) >= len(payloads),
             60, "offsets committed past the wide event", )
    letters = consume_all(dlq, 1, timeout=30)
    daemon.stop()

    assert count_rows(table) == len(payloads) - 1
    assert len(letters) == 1
    headers = {k: v.decode() for k, v in letters[0].headers()}
    assert headers["__connect.errors.offset"] == str(positions[50][1])
    assert headers["__connect.errors.exception.class.name"] == "hbingest.write.rejected_by_hbase"
    assert "hbase.framed_max_frame_bytes" in headers["__connect.errors.exception.message"], headers
