"""Issue 5 robustness, the part that strikes the shared stack: the gateway stopped under a running
daemon. Each checks that every produced event ends up as exactly one row (no loss, no duplicate)
through an independent reader. RUN_SERIAL; the daemon's own crashes and its group's failover, which
touch nothing shared, are in test_daemon_faults.py and run beside other files."""

import json
import signal
import subprocess
import time

from support import (SHORT_SESSION, STACK, count_rows, create_topic, mixed_events, produce, produce_in_background,
                     rss_kib, wait_for)

# Stated bound for the daemon's resident memory during a 30 s outage with in-flight limits of
# 20k events (about 300 bytes each, kept twice: payload for the DLQ and cells): well under 200 MiB.
RSS_BOUND_KIB = 200 * 1024


def test_thrift2_outage_pauses_and_resumes_without_loss_and_with_bounded_memory(daemon_factory, names):
    topic, table = names["topic"], names["table"]
    create_topic(topic, partitions=4)
    events = mixed_events(60_000)
    daemon = daemon_factory(topic, table, **{"writer.max_inflight_rows": 20_000,
                                             "writer.max_inflight_rows_per_partition": 5_000}).start()
    producer = produce_in_background(topic, events, chunks=20, pause=1.0)
    wait_for(lambda: daemon.metric("hbingest_rows_written_all_total") >= 5_000, 120, "ingest running")

    subprocess.run([STACK, "stop", "thrift2"], check=True)
    try:
        peak = 0
        outage_end = time.time() + 30
        while time.time() < outage_end:
            peak = max(peak, rss_kib(daemon.process.pid))
            time.sleep(0.5)
        assert daemon.metric("hbingest_paused_partitions") > 0, "consumption paused while HBase is unreachable"
        assert daemon.metric("hbingest_write_retries_total") > 0
        assert peak < RSS_BOUND_KIB, f"RSS {peak} KiB during the outage, bound {RSS_BOUND_KIB} KiB"
    finally:
        subprocess.run([STACK, "start", "thrift2"], check=True)
    producer.join()

    wait_for(lambda: daemon.metric("hbingest_committed_offset") >= len(events) and
             daemon.metric("hbingest_consumer_lag") == 0, 240, "lag to drain after the outage")
    assert daemon.metric("hbingest_paused_partitions") == 0, "resumed by itself"
    daemon.stop()
    assert count_rows(table) == len(events)
    print(f"peak RSS during the 30 s outage: {peak} KiB")


def test_second_stop_signal_exits_at_once_and_loses_nothing(daemon_factory, names):
    topic, table = names["topic"], names["table"]
    create_topic(topic, partitions=1)
    group = "g_" + topic
    # The first ends on the second signal without leaving the group: the second takes its partition
    # over when the first's (short) session times out.
    first = daemon_factory(topic, table, group=group, name="first",
                           **{"shutdown_deadline": "5m", **SHORT_SESSION}).start()
    subprocess.run([STACK, "stop", "thrift2"], check=True)
    try:
        produce(topic, [json.dumps(e) for e in mixed_events(10)])
        wait_for(lambda: first.metric("hbingest_events_consumed_total") >= 10, 60, "events consumed")
        first.process.send_signal(signal.SIGTERM)
        time.sleep(2)
        assert first.process.poll() is None, "still draining: the rows cannot be written"
        started = time.time()
        first.process.send_signal(signal.SIGTERM)
        assert first.process.wait(10) == 130
        assert time.time() - started < 5, "the second signal exits at once"
    finally:
        subprocess.run([STACK, "start", "thrift2"], check=True)
    second = daemon_factory(topic, table, group=group, name="second").start()
    wait_for(lambda: count_rows(table) == 10, 120, "the next run to store what the first never committed")
    second.stop()
