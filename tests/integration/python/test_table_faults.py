"""The `faults` tier, tables: the route table disabled, or dropped and re-created, while events
stream in. HBase 2.6.1's Thrift2 gateway answers a put into a disabled table only after its client's
retries (~150 s, a TIOError with canRetry) and into a missing one at once (the same): the writers
retry either way. These tests hold the daemon to what it promises around that:

- it notices: hbingest_table_available{table} drops to 0, /readyz names the table and the reason,
  one log line per change (not one per retry);
- it commits nothing it has not stored: the committed offsets stand still from the moment the table
  is unavailable until it is back, and never exceed the rows stored when the table can be read;
- it recovers by itself once the table is back (enabled, or re-created by `hbingest bootstrap`, as
  an operator would), and nothing is lost: every event is a row (disable), or every event not
  stored in the dropped table is a row of the new one (drop).
"""

import json
import threading
import time
import urllib.error
import urllib.request

from support import count_rows, create_topic, hbase, mixed_events, produce, run_hbingest, wait_for

PARTITIONS = 4
# Events over ~12 s: the strike lands a few seconds in and the stream goes on through it.
CHUNKS, CHUNK_EVENTS, CHUNK_PAUSE_S = 12, 800, 1.0
OUTAGE_S = 8


class Stream:
    """Produces CHUNKS × CHUNK_EVENTS events on a background thread, recording where each landed."""

    def __init__(self, topic):
        self.events = mixed_events(CHUNKS * CHUNK_EVENTS)
        self.positions = []

        def run():
            for i in range(CHUNKS):
                chunk = self.events[i * CHUNK_EVENTS:(i + 1) * CHUNK_EVENTS]
                self.positions += produce(topic, [json.dumps(e) for e in chunk])
                time.sleep(CHUNK_PAUSE_S)
        self.thread = threading.Thread(target=run)
        self.thread.start()

    def join(self):
        self.thread.join()


def start_daemon(daemon_factory, names, **overrides):
    create_topic(names["topic"], partitions=PARTITIONS)
    return daemon_factory(names["topic"], names["table"], **overrides).start()


def committed(daemon):
    """Committed next-offset per partition."""
    return {p: daemon.metric("hbingest_committed_offset", {"partition": str(p)}) for p in range(PARTITIONS)}


def check_committed_within_stored(daemon, table, what, gone=0):
    """`gone`: events whose rows went with a dropped table (committed before it was dropped)."""
    # Rows only grow while the table is up: read the commit first, then count.
    total = daemon.metric("hbingest_committed_offset") - gone
    stored = count_rows(table)
    assert total <= stored, f"{what}: {total} events committed but only {stored} rows stored"


def table_available(daemon, table):
    return daemon.metric("hbingest_table_available", {"table": "default:" + table})


def readyz(daemon):
    try:
        with urllib.request.urlopen(daemon.http + "/readyz", timeout=5) as response:
            return json.loads(response.read())
    except urllib.error.HTTPError as error:  # 503 carries the same body
        return json.loads(error.read())


def ingest_running(daemon, table):
    wait_for(lambda: daemon.metric("hbingest_rows_written_all_total") >= 2_000, 60, "ingest running")
    check_committed_within_stored(daemon, table, "before the strike")


def hold_while_unavailable(daemon, table, reason):
    """Waits for the daemon to see the table unavailable; then, for OUTAGE_S, nothing is committed.
    Returns the committed offsets of the outage."""
    wait_for(lambda: table_available(daemon, table) == 0, 30, f"hbingest_table_available 0 ({reason})")
    # A drop passes through "disabled": the reason may take one more check to say "does not exist".
    wait_for(lambda: f"HBase table default:{table} {reason}" in readyz(daemon)["reasons"], 10,
             f"/readyz: table {reason}")
    assert not readyz(daemon)["ready"]
    # Batches acknowledged before the table went away are committed within a commit interval.
    time.sleep(1)
    frozen = committed(daemon)
    end = time.time() + OUTAGE_S
    while time.time() < end:
        now = committed(daemon)
        assert now == frozen, f"committed {now} while the table was unavailable (was {frozen})"
        assert table_available(daemon, table) == 0
        time.sleep(0.5)
    return frozen


def recovered(daemon, stream, table, what, gone=0):
    wait_for(lambda: table_available(daemon, table) == 1, 30, f"hbingest_table_available 1 after {what}")
    stream.join()
    total = len(stream.events)
    end = time.time() + 90
    while time.time() < end:
        check_committed_within_stored(daemon, table, f"after {what}", gone)
        if daemon.metric("hbingest_committed_offset") >= total and daemon.metric("hbingest_consumer_lag") == 0:
            break
        time.sleep(0.5)
    ends = {p: max(o for q, o in stream.positions if q == p) + 1 for p in range(PARTITIONS)}
    assert committed(daemon) == ends, f"after {what}: committed offsets are at the log end"
    wait_for(lambda: daemon.ready(), 30, f"/readyz ready again after {what}")
    assert daemon.metric("hbingest_paused_partitions") == 0, f"consumption resumed by itself after {what}"
    assert daemon.process.poll() is None, "the daemon stayed up"
    return ends


def test_table_disabled_then_enabled_mid_stream(daemon_factory, names):
    table = names["table"]
    daemon = start_daemon(daemon_factory, names)
    stream = Stream(names["topic"])
    ingest_running(daemon, table)
    connection = hbase()
    try:
        connection.disable_table(table)
        try:
            hold_while_unavailable(daemon, table, "is disabled")
        finally:
            connection.enable_table(table)
    finally:
        connection.close()
    recovered(daemon, stream, table, "the table was disabled")
    daemon.stop()
    rows = count_rows(table)
    assert rows == len(stream.events), f"{rows} rows for {len(stream.events)} events"
    log = daemon.log_text()
    assert log.count(f"HBase table default:{table} is disabled") == 1, "one log line per change"
    assert log.count(f"HBase table default:{table} is writable again") == 1
    print(f"disabled and re-enabled: {rows} rows")


def test_table_dropped_then_recreated_by_bootstrap_mid_stream(daemon_factory, names):
    # One writer: batches are stored in submission order, so the rows in the dropped table are a
    # prefix of each partition and the committed offset is exactly where that prefix ends. With
    # more writers a later batch may be stored before an earlier one, and be lost with the table.
    table = names["table"]
    daemon = start_daemon(daemon_factory, names, **{"writer.writers": 1})
    stream = Stream(names["topic"])
    ingest_running(daemon, table)
    connection = hbase()
    try:
        connection.delete_table(table, disable=True)
    finally:
        connection.close()
    try:
        frozen = hold_while_unavailable(daemon, table, "does not exist")
    finally:
        # What the log line tells the operator to do: same family, TTL and splits.
        run_hbingest("bootstrap", "--config", daemon.config_path)
    ends = recovered(daemon, stream, table, "the table was dropped", gone=sum(frozen.values()))
    daemon.stop()
    # The dropped rows went with the old table (their offsets had been committed); every event
    # from the committed offsets on is a row of the new one.
    expected = int(sum(ends[p] - frozen[p] for p in range(PARTITIONS)))
    rows = count_rows(table)
    assert rows == expected, f"{rows} rows in the re-created table, {expected} events after the committed offsets"
    assert daemon.log_text().count(f"HBase table default:{table} does not exist") == 1
    print(f"dropped and re-created: {rows} rows after the drop, {len(stream.events) - expected} went with the table")
