"""The `faults` tier's stream and checker, shared by test_faults.py (the gateway and HBase
themselves killed: RUN_SERIAL), test_link_faults.py and test_kafka_link_faults.py (Toxiproxy
between the daemon and the gateway or the broker: only the test's own link). While events stream
in, the test strikes; after every fault the checker compares what Kafka holds with what HBase
holds: every produced event is exactly one row (rows are keyed by topic partition and offset, so a
duplicate delivery rewrites the same row and a loss is a missing one), the committed offsets cover
every event (nothing committed that is not stored is then implied by the row count being checked
only after the commit), resident memory stayed bounded, and the daemon recovered by itself:
consumption resumed and /readyz is ready again."""

import json
import threading
import time

from support import count_rows, create_topic, group_committed, mixed_events, produce, rss_kib, wait_for

# In-flight bounds of 20k events (~300 B each, held as payload and cells): well under 200 MiB.
RSS_BOUND_KIB = 200 * 1024
EVENTS = 30_000


class Stream:
    """Produces EVENTS events over ~10 s on a background thread while the test strikes."""

    def __init__(self, topic, count=EVENTS, chunks=20, pause=0.5):
        self.events = mixed_events(count)
        size = len(self.events) // chunks

        def run():
            for i in range(chunks):
                produce(topic, [json.dumps(e) for e in self.events[i * size:(i + 1) * size]])
                time.sleep(pause)
        self.thread = threading.Thread(target=run)
        self.thread.start()

    def join(self):
        self.thread.join()


def start_daemon(daemon_factory, names, endpoint=None):
    create_topic(names["topic"], partitions=4)
    overrides = {"writer.max_inflight_rows": 20_000, "writer.max_inflight_rows_per_partition": 5_000}
    if endpoint:
        overrides["hbase.endpoints"] = [endpoint]
    daemon = daemon_factory(names["topic"], names["table"], **overrides).start()
    return daemon


def watch_rss(daemon, seconds):
    peak, end = 0, time.time() + seconds
    while time.time() < end:
        peak = max(peak, rss_kib(daemon.process.pid))
        time.sleep(0.5)
    return peak


def check_recovered_and_complete(daemon, stream, table, peak_kib, what):
    # Commits only ever cover stored rows, and rows only grow: read the commit first.
    committed = daemon.metric("hbingest_committed_offset")
    stored = count_rows(table)
    assert stored >= committed, f"after {what}: {committed} events committed but only {stored} rows stored"
    stream.join()
    # The broker's committed offsets, not the daemon's word for them: once a commit that librdkafka
    # never answered was reported as committed while the broker had an older offset.
    group, topic = daemon.config["kafka"]["group_id"], daemon.config["kafka"]["topics"][0]
    try:
        wait_for(lambda: daemon.metric("hbingest_consumer_lag") == 0 and
                 group_committed(group, topic) >= len(stream.events), 300, f"lag to drain after {what}")
    except AssertionError as error:
        raise AssertionError(f"{error}\n{daemon.diagnosis()}") from None
    wait_for(lambda: daemon.ready(), 60, f"/readyz ready again after {what}")
    assert daemon.metric("hbingest_paused_partitions") == 0, f"consumption resumed by itself after {what}"
    assert daemon.process.poll() is None, "the daemon stayed up"
    daemon.stop()
    rows = count_rows(table)
    assert rows == len(stream.events), f"after {what}: {rows} rows for {len(stream.events)} events"
    assert peak_kib < RSS_BOUND_KIB, f"RSS {peak_kib} KiB during {what}, bound {RSS_BOUND_KIB} KiB"
    print(f"{what}: {rows} rows, peak RSS {peak_kib} KiB")
