"""Consumer-group rebalances under load (issue 12, defect 6): three daemons in one group on a
6-partition topic while events stream in; members join, are stopped, killed -9, frozen past their
session and restarted. A partition's committed offset belongs to its current owner; a member that
commits a partition it no longer owns rewinds the new owner, so a watcher reads the group's
committed offsets all along and fails on any that went backwards. After every step the commits
cover only stored rows; at the end every produced event is exactly one row (rows are keyed by
partition and offset: what a killed member re-delivers rewrites identical cells) and the commits
reach the end of every partition."""

import json
import signal
import threading
import time

from confluent_kafka import ConsumerGroupState
from confluent_kafka.admin import AdminClient

from support import KAFKA, CommitWatch, count_rows, create_topic, mixed_events, produce, wait_for

PARTITIONS = 6
EVENTS = 24_000
# A member killed -9 leaves the group when its session times out: 6 s, the broker's minimum.
KAFKA_PROPERTIES = {"session.timeout.ms": "6000", "heartbeat.interval.ms": "1000"}


def wait_for_stable_group(admin, group, members, what):
    """Until the group is stable with `members` members sharing every partition."""
    def stable():
        description = admin.describe_consumer_groups([group])[group].result(timeout=10)
        owned = sum(len(m.assignment.topic_partitions) for m in description.members)
        return (description.state == ConsumerGroupState.STABLE and len(description.members) == members and
                owned == PARTITIONS)
    wait_for(stable, 60, f"{members} member(s) sharing every partition after {what}", interval=0.3)


def test_members_join_leave_and_die_under_load_without_commit_regression(daemon_factory, names):
    topic, table = names["topic"], names["table"]
    group = "g_" + topic
    create_topic(topic, partitions=PARTITIONS)
    events = mixed_events(EVENTS)

    def stream(chunks=60, pause=0.4):
        size = len(events) // chunks
        for i in range(chunks):
            produce(topic, [json.dumps(e) for e in events[i * size:(i + 1) * size]])
            time.sleep(pause)
    producer = threading.Thread(target=stream)
    producer.start()

    admin = AdminClient({"bootstrap.servers": KAFKA()})
    watch = CommitWatch(group, topic, PARTITIONS)
    daemons = {name: daemon_factory(topic, table, group=group, name=name, **{"kafka.properties": KAFKA_PROPERTIES})
               for name in ("a", "b", "c")}
    a, b, c = daemons["a"], daemons["b"], daemons["c"]

    def step(what, action, members):
        watch.step = what
        action()
        wait_for_stable_group(admin, group, members, what)
        time.sleep(2)  # ingest under the new assignment
        # Commits only ever cover stored rows, and rows only grow: read the commits first.
        committed = watch.read()
        rows = count_rows(table)
        assert sum(committed) <= rows, f"after {what}: {sum(committed)} events committed, {rows} rows stored"
        assert not watch.regressions, f"committed offsets went backwards: {watch.regressions}"
        print(f"{what}: committed {committed}, {rows} rows")

    try:
        step("a starts", a.start, 1)
        step("b joins", b.start, 2)
        step("c joins", c.start, 3)
        step("b stopped (SIGTERM)", b.stop, 2)
        step("c killed (SIGKILL)", c.kill, 1)
        step("b and c restart", lambda: (b.start(), c.start()), 3)
        step("a killed (SIGKILL)", a.kill, 2)
        step("a restarts", a.start, 3)
        # Stopped past its session, a member finds its assignment lost when it wakes up: by then
        # the partitions are the others', and it must drop them without a commit.
        step("a frozen (SIGSTOP) past its session", lambda: a.process.send_signal(signal.SIGSTOP), 2)
        step("a thawed (SIGCONT)", lambda: a.process.send_signal(signal.SIGCONT), 3)
        assert "partitions lost" in a.log_text(), "the thawed member was told its assignment was lost"

        watch.step = "catching up"
        producer.join()
        end = watch.end_offsets()
        assert sum(end) == EVENTS
        wait_for(lambda: watch.read() == end, 120, "the group's commits to reach the end of every partition")
        watch.step = "stopping"
        for daemon in (a, b, c):
            daemon.stop()
        assert watch.read() == end, "the stop committed nothing past the end, and nothing below it"
        assert not watch.regressions, f"committed offsets went backwards: {watch.regressions}"
        rows = count_rows(table)
        assert rows == EVENTS, f"{rows} rows for {EVENTS} events"
        dropped = sum(d.log_text().count("polled message(s) of partitions revoked meanwhile") for d in (a, b, c))
        print(f"{rows} rows, commits at the end offsets {end}; batches with messages of revoked partitions: {dropped}")
    finally:
        producer.join()
        watch.close()
