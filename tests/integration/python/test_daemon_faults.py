"""Issue 5 robustness, the daemon's own failures: killed -9 mid-stream, one of two members of a group
killed, its topic deleted and re-created under it. Each checks that every produced event ends up as
exactly one row (no loss, no duplicate) through an independent reader. They strike nothing shared
(their own daemons, group and topic), so this file runs beside others; the gateway outages are in
test_robustness.py (RUN_SERIAL)."""

import json
import time

from confluent_kafka.admin import AdminClient

from support import (KAFKA, SHORT_SESSION, count_rows, create_topic, group_committed, hbase, key_position, login,
                     mixed_events, now_ms, produce, produce_in_background, wait_for)


def test_kill_9_mid_stream_then_restart_loses_and_duplicates_nothing(daemon_factory, names):
    topic, table = names["topic"], names["table"]
    create_topic(topic, partitions=4)
    events = mixed_events(40_000)
    producer = produce_in_background(topic, events)

    first = daemon_factory(topic, table, group="g_" + topic, name="first", **SHORT_SESSION).start()
    wait_for(lambda: first.metric("hbingest_rows_written_all_total") >= 10_000, 120, "10k rows before the kill")
    first.kill()  # SIGKILL: no flush, no commit
    producer.join()

    second = daemon_factory(topic, table, group="g_" + topic, name="second").start()
    wait_for(lambda: second.metric("hbingest_consumer_lag") == 0 and
             second.metric("hbingest_committed_offset") >= len(events), 180, "the restarted daemon to catch up")
    second.stop()
    assert count_rows(table) == len(events), "rows == distinct events: replayed events rewrote the same keys"


def test_two_daemons_in_one_group_one_killed_loses_nothing(daemon_factory, names):
    topic, table = names["topic"], names["table"]
    create_topic(topic, partitions=4)
    group = "g_" + topic
    events = mixed_events(40_000)
    a = daemon_factory(topic, table, group=group, name="a", **SHORT_SESSION).start()
    b = daemon_factory(topic, table, group=group, name="b", **SHORT_SESSION).start()
    producer = produce_in_background(topic, events)
    wait_for(lambda: a.metric("hbingest_rows_written_all_total") > 2_000 and
             b.metric("hbingest_rows_written_all_total") > 2_000, 120, "both daemons writing")
    b.kill()
    producer.join()
    wait_for(lambda: count_rows(table) >= len(events), 240, "the survivor to take over b's partitions")
    a.stop()
    assert count_rows(table) == len(events)


def test_topic_deleted_and_recreated_under_the_daemon_loses_nothing_of_the_new_topic(daemon_factory, names):
    """Issue 22, defect 1. librdkafka reads a re-created topic from offset 0 again, without a
    rebalance. On 72ad3ec the daemon exited 1 after committing the old topic's position into the new
    one, whose events below it were then never stored. Every event of the new topic must be stored,
    and at no time may the group's committed offset pass a new-topic event not stored yet.

    The new topic is first filled to below the old position and only then past it: a topic re-created
    and refilled past the consumer's position before its next fetch looks, to a client without topic
    ids (librdkafka 2.0.2), like the old topic going on, and its events below that position are not
    read (docs/operations.md, "Offsets that go back"). The first events are read only once the
    consumer has met the shorter log, so this order is not a matter of timing."""
    topic, table, group = names["topic"], names["table"], "g_" + names["topic"]
    create_topic(topic, partitions=1)
    base = now_ms()
    # Times apart per era: the events preset keys a row by time and position, and both eras use
    # offsets from 0. The era field tells the eras apart in HBase.
    old = [login(base - 200_000 + i % 1000, "u%06d" % i, era="old") for i in range(1_500)]
    new = [login(base - 100_000 + i % 1000, "u%06d" % i, era="new") for i in range(3_000)]
    produce(topic, [json.dumps(e) for e in old])
    daemon = daemon_factory(topic, table, group=group).start()
    wait_for(lambda: group_committed(group, topic) == len(old), 60, "the old topic stored and committed")

    admin = AdminClient({"bootstrap.servers": KAFKA()})
    admin.delete_topics([topic])[topic].result(timeout=30)
    wait_for(lambda: topic not in admin.list_topics(timeout=10).topics, 30, "the topic deleted")
    wait_for(lambda: _created(topic), 30, "the topic re-created")
    below_old_position = len(old) // 3
    produce(topic, [json.dumps(e) for e in new[:below_old_position]])

    def new_offsets_stored():
        connection = hbase()
        try:
            scan = connection.table(table).scan(columns=[b"d:era"], batch_size=5000)
            return {key_position(key)[1] for key, cells in scan if cells.get(b"d:era") == b"new"}
        finally:
            connection.close()

    wait_for(lambda: len(new_offsets_stored()) == below_old_position, 60, "the re-created topic read from its start")
    produce(topic, [json.dumps(e) for e in new[below_old_position:]])

    passed_unstored = []
    deadline = time.time() + 45
    while time.time() < deadline:
        committed = group_committed(group, topic)
        stored = new_offsets_stored()  # after reading the commit: rows only ever get added
        missing = [o for o in range(min(committed, len(new))) if o not in stored]
        if missing:
            passed_unstored.append(f"committed {committed} with {len(missing)} new events below it not stored "
                                   f"(first {missing[0]})")
        if daemon.process.poll() is not None or (committed == len(new) and len(stored) == len(new)):
            break
        time.sleep(0.5)
    assert daemon.process.poll() is None, f"daemon exited {daemon.process.returncode}: {daemon.log_text()[-3000:]}"
    assert passed_unstored == [], passed_unstored[:3]
    assert len(new_offsets_stored()) == len(new), "every event of the re-created topic is stored"
    assert group_committed(group, topic) == len(new)
    daemon.stop()


def _created(topic):
    try:
        create_topic(topic, partitions=1)
        return True
    except Exception:  # noqa: BLE001 - still marked for deletion: TOPIC_ALREADY_EXISTS until it is gone
        time.sleep(0.5)
        return False
