"""Issue 5 end to end against real Kafka and HBase: everything lands, readable by independent
clients; poison pills go to the DLQ with Kafka Connect headers; TTL expires rows; bootstrap."""

import hashlib
import json
import os
import random
import sys
import time
from pathlib import Path

import pytest

from support import (consume_all, count_rows, create_topic, hbase, login, mixed_events, now_ms, order, produce,
                     run_hbingest, scan_all, unique, wait_for)

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "python"))
import check_key_vectors as independent_keys  # noqa: E402  (the Python re-implementation of keyspec)

EVENTS_SPEC_8 = {"components": [
    {"name": "salt", "type": "salt", "buckets": 8, "of": ["kafka:partition", "kafka:offset"]},
    {"name": "event", "type": "field", "field": "event_id", "width": 16, "pad": "\u0001"},
    {"name": "time", "type": "time", "field": "ts", "input": "auto", "format": "yyyyMMddHHmmssSSS"},
    {"name": "partition", "type": "partition", "width": 4},
    {"name": "offset", "type": "offset", "width": 19}]}


def expected_cell(value):
    """How the daemon writes a JSON value: strings as UTF-8 text, the rest as compact JSON."""
    if isinstance(value, str):
        return value.encode()
    return json.dumps(value, separators=(",", ":")).encode()


def test_100k_mixed_events_land_and_read_back_through_happybase(daemon_factory, names):
    topic, table = names["topic"], names["table"]
    create_topic(topic, partitions=4)
    events = mixed_events(100_000)
    positions = produce(topic, [json.dumps(e, separators=(",", ":")) for e in events])

    daemon = daemon_factory(topic, table).start()
    wait_for(lambda: daemon.metric("hbingest_rows_written_all_total") >= len(events), 240, "100k rows written")
    wait_for(lambda: daemon.metric("hbingest_committed_offset") >= len(events), 30, "offsets committed")
    daemon.stop()

    rows = dict(scan_all(table, columns=[b"d:event_id"]))
    assert len(rows) == len(events), "one row per event, no duplicates"
    by_type = {}
    for cells in rows.values():
        by_type[cells[b"d:event_id"]] = by_type.get(cells[b"d:event_id"], 0) + 1
    assert by_type == {b"login": sum(e["event_id"] == "login" for e in events),
                       b"order": sum(e["event_id"] == "order" for e in events)}

    # A sample, cell by cell, with the key computed by an independent implementation.
    connection = hbase()
    try:
        hbase_table = connection.table(table)
        for i in random.sample(range(len(events)), 200):
            partition, offset = positions[i]
            meta = {"topic": topic, "partition": partition, "offset": offset, "timestamp_ms": 0}
            key = independent_keys.encode(EVENTS_SPEC_8, events[i], meta)
            row = hbase_table.row(key, include_timestamp=True)
            assert row, f"row for {partition}@{offset} missing (key {key!r})"
            assert {c.decode()[2:]: v for c, (v, ts) in row.items()} == \
                {k: expected_cell(v) for k, v in events[i].items()}
            assert {ts for _, (_, ts) in row.items()} == {events[i]["ts"]}, "cell timestamp = event time"
    finally:
        connection.close()


def test_poison_pills_go_to_the_dlq_with_connect_headers_and_good_events_flow(daemon_factory, names):
    topic, table, dlq = names["topic"], names["table"], names["dlq"]
    create_topic(topic, partitions=1)
    create_topic(dlq, partitions=1)
    good = [login(now_ms() - 1000, "u%d" % i) for i in range(50)]
    poison = [
        (b'{"event_id": "login", "ts": ', "hbingest.decode.invalid_json"),
        (json.dumps({"ts": now_ms()}).encode(), "hbingest.decode.missing_type"),
        (json.dumps({"event_id": "login"}).encode(), None),  # no ts: Kafka timestamp fallback, stored
        (b"x" * (5 * 1024 * 1024), "hbingest.decode.too_large"),
        (bytes(random.randrange(256) for _ in range(300)), "hbingest.decode.invalid_json"),
        (json.dumps({"event_id": "login" * 10, "ts": now_ms()}).encode(), "hbingest.route.unknown_type"),
        (json.dumps({"event_id": "signup", "ts": now_ms()}).encode(), "hbingest.route.unknown_type"),
    ]
    payloads = [json.dumps(e).encode() for e in good[:25]] + [p for p, _ in poison] + \
               [json.dumps(e).encode() for e in good[25:]]
    positions = produce(topic, payloads, partition_of=lambda i: 0)
    expected_letters = {positions[25 + i][1]: cls for i, (_, cls) in enumerate(poison) if cls}

    daemon = daemon_factory(topic, table).start()
    letters = consume_all(dlq, len(expected_letters), timeout=90)
    wait_for(lambda: daemon.metric("hbingest_rows_written_all_total") >= 51, 60, "good rows written")
    daemon.stop()

    assert len(letters) == len(expected_letters)
    for letter in letters:
        headers = {k: v.decode() for k, v in letter.headers()}
        offset = int(headers["__connect.errors.offset"])
        assert headers["__connect.errors.topic"] == topic
        assert headers["__connect.errors.partition"] == "0"
        assert headers["__connect.errors.exception.class.name"] == expected_letters[offset]
        assert headers["__connect.errors.exception.message"]
        assert headers["__hbingest.errors.stage"] in ("decode", "route", "key")
        original = payloads[positions.index((0, offset))]
        if len(original) > 900 * 1024:  # dlq.max_letter_bytes: cut, with the original's size and digest
            assert headers["__hbingest.truncated"] == "true"
            assert headers["__hbingest.original.size"] == str(len(original))
            assert headers["__hbingest.original.sha256"] == hashlib.sha256(original).hexdigest()
            assert 800 * 1024 < len(letter.value()) < 900 * 1024
            assert letter.value() == original[:len(letter.value())], "the first bytes of the original"
        else:
            assert "__hbingest.truncated" not in headers
            assert letter.value() == original, "the original bytes"
    assert count_rows(table) == 51


def test_dead_letter_the_dlq_topic_refuses_does_not_freeze_its_partition(daemon_factory, names):
    """A DLQ topic with max.message.bytes=10000 and a 50 kB invalid event: the broker refuses the
    letter (MESSAGE_TOO_LARGE) every time it is sent whole. It goes again with its headers only, and
    the events after it are stored and committed (before the fix the letter was re-sent on every
    loop turn and the partition's commits stopped at it forever)."""
    topic, table, dlq = names["topic"], names["table"], names["dlq"]
    create_topic(topic, partitions=1)
    create_topic(dlq, partitions=1, config={"max.message.bytes": "10000"})
    big = b'{"event_id": "login", "ts": ' + b"9" * 50_000  # not JSON: dead-lettered by the decoder
    good = [json.dumps(login(now_ms() - 1000, "u%d" % i)).encode() for i in range(30)]
    payloads = good[:10] + [big] + good[10:]
    positions = produce(topic, payloads, partition_of=lambda i: 0)

    daemon = daemon_factory(topic, table).start()
    wait_for(lambda: daemon.metric("hbingest_committed_offset", {"topic": topic, "partition": "0"}) >= len(payloads),
             60, "offsets committed past the refused letter")
    letters = consume_all(dlq, 1, timeout=30)
    rejected = daemon.metric("hbingest_dead_letters_total", {"outcome": "rejected"})
    delivered = daemon.metric("hbingest_dead_letters_total", {"outcome": "delivered"})
    retrying = daemon.metric("hbingest_dead_letters_retrying")
    daemon.stop()

    assert count_rows(table) == len(good)
    assert len(letters) == 1
    headers = {k: v.decode() for k, v in letters[0].headers()}
    assert headers["__connect.errors.offset"] == str(positions[10][1])
    assert headers["__connect.errors.exception.class.name"] == "hbingest.decode.invalid_json"
    assert headers["__hbingest.truncated"] == "true"
    assert headers["__hbingest.original.size"] == str(len(big))
    assert headers["__hbingest.original.sha256"] == hashlib.sha256(big).hexdigest()
    assert not letters[0].value(), "sent again with its headers only"
    assert (rejected, delivered, retrying) == (1, 1, 0)


def test_key_field_longer_than_its_width_is_dead_lettered(daemon_factory, names):
    topic, table, dlq = names["topic"], names["table"], names["dlq"]
    create_topic(topic, partitions=1)
    create_topic(dlq, partitions=1)
    long_type = "checkout_completed_v2"  # 21 bytes, wider than the 16-byte event field
    produce(topic, [json.dumps({"event_id": long_type, "ts": now_ms()}), json.dumps(login(now_ms()))])
    daemon = daemon_factory(topic, table, **{
        "dlq.unknown_type": "default_route",
        "default_route": {"table": table, "preset": "events", "preset_params": {"buckets": "8"}}}).start()
    letters = consume_all(dlq, 1, timeout=60)
    daemon.stop()
    assert len(letters) == 1
    headers = {k: v.decode() for k, v in letters[0].headers()}
    assert headers["__hbingest.errors.stage"] == "key"
    assert "event" in headers["__connect.errors.exception.message"]
    assert count_rows(table) == 1


def test_rows_expire_after_the_ttl(daemon_factory, names):
    topic, table = names["topic"], names["table"]
    create_topic(topic, partitions=1)
    produce(topic, [json.dumps(login(now_ms())) for _ in range(10)])
    daemon = daemon_factory(topic, table, **{"table.ttl": "4s"}).start()
    wait_for(lambda: daemon.metric("hbingest_rows_written_all_total") >= 10, 60, "rows written")
    daemon.stop()
    assert count_rows(table) == 10
    wait_for(lambda: count_rows(table) == 0, 30, "rows to expire")


def test_old_events_are_skipped_not_written(daemon_factory, names):
    topic, table = names["topic"], names["table"]
    create_topic(topic, partitions=1)
    produce(topic, [json.dumps(login(now_ms() - 3_600_000)), json.dumps(login(now_ms()))])
    daemon = daemon_factory(topic, table).start()
    wait_for(lambda: daemon.metric("hbingest_events_expired_total") >= 1, 60, "expired event counted")
    wait_for(lambda: daemon.metric("hbingest_rows_written_all_total") >= 1, 60, "fresh row written")
    daemon.stop()
    assert count_rows(table) == 1


def test_bootstrap_presplits_on_salt_buckets_and_is_idempotent(tmp_path, names):
    from support import write_config
    config_path = tmp_path / "c.yaml"
    write_config(config_path, names["topic"], names["table"], **{"table.create_table": False})
    first = run_hbingest("bootstrap", "--config", str(config_path))
    assert "created" in first.stdout
    assert f"created dead-letter topic {names['dlq']}" in first.stdout
    from confluent_kafka.admin import AdminClient, ConfigResource
    from support import KAFKA
    resource = ConfigResource(ConfigResource.Type.TOPIC, names["dlq"])
    admin = AdminClient({"bootstrap.servers": KAFKA()})  # must outlive its future
    configs = admin.describe_configs([resource])[resource].result(30)
    assert configs["max.message.bytes"].value == "10485760", "room for a 5 MB dead letter"
    second = run_hbingest("bootstrap", "--config", str(config_path))
    assert "ok" in second.stdout and "created" not in second.stdout and "dead-letter topic exists" in second.stdout

    connection = hbase()
    try:
        regions = connection.table(names["table"]).regions()
        # 8 buckets: the salt is one digit wide (digits of n-1), one region per bucket
        assert sorted(r["start_key"] for r in regions) == [b""] + [b"%d" % b for b in range(1, 8)]
        families = connection.table(names["table"]).families()
        assert families[b"d"]["time_to_live"] == 600 and families[b"d"]["max_versions"] == 1
        assert families[b"d"]["bloom_filter_type"] == b"ROW"
    finally:
        connection.close()

    write_config(config_path, names["topic"], names["table"], **{"table.ttl": "20m"})
    differs = run_hbingest("bootstrap", "--config", str(config_path), check=False)
    assert differs.returncode == 1 and "TTL is 600 s, config wants 1200 s" in differs.stdout


def test_daemon_refuses_to_start_without_its_table(tmp_path, names):
    """A table missing at start is a deployment mistake: refused, not retried forever (the gateway
    answers each put into it with a retriable TIOError; test_table_faults.py covers one lost while running)."""
    from support import write_config
    config_path = tmp_path / "c.yaml"
    write_config(config_path, names["topic"], names["table"], **{"table.create_table": False})
    result = run_hbingest("run", "--config", str(config_path), check=False, timeout=60)
    assert result.returncode == 1
    assert f"HBase table default:{names['table']} does not exist" in result.stderr
