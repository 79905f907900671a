"""Issue 26, static group membership (kafka.group_instance_id): a member killed -9 (or stopped
cleanly) and restarted with its id takes its own partitions back without a rebalance of the other
member, and two live daemons with one id end with the older one stopped (exit 1, a clear message),
never with an offset committed past an event not stored. No timing assertions: what is checked is who owned what
and that nothing was lost or committed ahead of HBase."""

import re
import subprocess
import time

import pytest

from confluent_kafka import Consumer, TopicPartition

from support import (BINARY, KAFKA, count_rows, create_topic, mixed_events, produce_in_background, stored_positions, wait_for)

# Long enough that a restart always comes back before the group gives up on the member; the
# heartbeat short, so a fenced member notices soon; the assignor of deploy/kubernetes' config.
STATIC_SESSION = {"session.timeout.ms": "30000", "heartbeat.interval.ms": "1000",
                  "partition.assignment.strategy": "cooperative-sticky"}


def committed_offsets(group, topic, partitions):
    consumer = Consumer({"bootstrap.servers": KAFKA(), "group.id": group, "enable.auto.commit": False})
    try:
        committed = consumer.committed([TopicPartition(topic, p) for p in range(partitions)], timeout=10)
        return {tp.partition: max(tp.offset, 0) for tp in committed}
    finally:
        consumer.close()


def committed_past_unstored(group, topic, table, partitions):
    """Every (partition, offset) below the group's committed offset that HBase does not hold."""
    committed = committed_offsets(group, topic, partitions)  # before the scan: rows only get added
    stored = set(stored_positions(table))
    return [(p, o) for p, c in committed.items() for o in range(c) if (p, o) not in stored]


def assigned(log):
    """The partitions of each "assigned" line of a daemon's log, as sets."""
    marker = "kafka consumer: assigned "
    return [set(re.findall(r"\[(\d+)\]", line.split(marker, 1)[1])) for line in log.splitlines() if marker in line]


def test_kill_9_and_restart_with_the_same_id_takes_its_partitions_back(daemon_factory, names):
    topic, table, group = names["topic"], names["table"], "g_" + names["topic"]
    create_topic(topic, partitions=4)
    events = mixed_events(20_000)
    # The other member joins first (the group's leader), dynamic: any rebalance would revoke its
    # partitions, which its log says.
    other = daemon_factory(topic, table, group=group, name="other",
                           **{"kafka.properties": STATIC_SESSION}).start()
    wait_for(lambda: assigned(other.log_text()), 60, "the other member assigned")
    static = daemon_factory(topic, table, group=group, name="static", **{"kafka.group_instance_id": "ingest-a",
                                                                          "kafka.properties": STATIC_SESSION}).start()
    wait_for(lambda: assigned(static.log_text()), 60, "the static member assigned")
    producer = produce_in_background(topic, events)
    wait_for(lambda: static.metric("hbingest_rows_written_all_total") > 1_000, 120, "the static member writing")
    owned = assigned(static.log_text())[-1]
    other_log_before = len(other.log_text())
    static.kill()  # SIGKILL: no commit, no LeaveGroup
    assert committed_past_unstored(group, topic, table, 4) == []

    again = daemon_factory(topic, table, group=group, name="again", **{"kafka.group_instance_id": "ingest-a",
                                                                        "kafka.properties": STATIC_SESSION}).start()
    wait_for(lambda: assigned(again.log_text()), 60, "the restarted member assigned")
    producer.join()
    wait_for(lambda: count_rows(table) >= len(events) and
             sum(committed_offsets(group, topic, 4).values()) >= len(events), 120, "every event stored and committed")
    assert assigned(again.log_text()) == [owned], "the same partitions, in one assignment"
    since_kill = other.log_text()[other_log_before:]
    assert "revoked" not in since_kill, "the other member was not rebalanced:\n" + since_kill[-2000:]
    assert committed_past_unstored(group, topic, table, 4) == []
    assert count_rows(table) == len(events)

    # A clean stop (a rolling restart's SIGTERM) does not leave the group either.
    other_log_before = len(other.log_text())
    again.stop()
    third = daemon_factory(topic, table, group=group, name="third", **{"kafka.group_instance_id": "ingest-a",
                                                                        "kafka.properties": STATIC_SESSION}).start()
    wait_for(lambda: assigned(third.log_text()), 60, "the member restarted after a clean stop assigned")
    assert assigned(third.log_text()) == [owned]
    since_stop = other.log_text()[other_log_before:]
    assert "revoked" not in since_stop, "the other member was not rebalanced:\n" + since_stop[-2000:]
    third.stop()
    other.stop()


def test_two_live_daemons_with_one_id_stop_the_older_one(daemon_factory, names):
    topic, table, group = names["topic"], names["table"], "g_" + names["topic"]
    create_topic(topic, partitions=2)
    events = mixed_events(20_000)
    settings = {"kafka.group_instance_id": "twin", "kafka.properties": STATIC_SESSION}
    older = daemon_factory(topic, table, group=group, name="older", **settings).start()
    producer = produce_in_background(topic, events)
    wait_for(lambda: older.metric("hbingest_rows_written_all_total") > 1_000, 120, "the older daemon writing")
    newer = daemon_factory(topic, table, group=group, name="newer", **settings).start()

    violations = []
    deadline = time.time() + 60
    while older.process.poll() is None and time.time() < deadline:
        violations += committed_past_unstored(group, topic, table, 2)
        time.sleep(0.3)
    assert older.process.poll() == 1, "the fenced daemon stops with exit status 1:\n" + older.log_text()[-3000:]
    message = f"another live member joined group {group} with group.instance.id twin"
    assert older.log_text().count(message) == 1, older.log_text()[-3000:]
    assert newer.process.poll() is None, newer.log_text()[-3000:]

    producer.join()
    wait_for(lambda: count_rows(table) >= len(events) and
             sum(committed_offsets(group, topic, 2).values()) >= len(events), 120, "the newer daemon caught up")
    violations += committed_past_unstored(group, topic, table, 2)
    assert violations == [], violations[:5]
    assert count_rows(table) == len(events)
    newer.stop()


def test_check_config_refuses_auto_on_a_deployment_pods_name(tmp_path, names):
    """`auto` on a host named like a Deployment's pod (a new name on every restart) is refused with
    the line and the remedy; a StatefulSet's pod name is taken. The host name is set in a UTS
    namespace of the check's own (unshare), where the machine allows one."""
    config = tmp_path / "auto.yaml"
    config.write_text(f"""kafka:
  bootstrap_servers: {KAFKA()}
  topics: [{names["topic"]}]
  group_instance_id: auto
hbase: {{endpoints: ["127.0.0.1:9090"]}}
routes:
  - {{event_types: [login], table: {names["table"]}, preset: events}}
""")

    def check_as(host):
        return subprocess.run(["unshare", "--uts", "sh", "-c", 'hostname "$0" && exec "$1" check-config "$2"', host,
                               BINARY(), str(config)], capture_output=True, text=True, timeout=60)

    probe = subprocess.run(["unshare", "--uts", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("no UTS namespace here (unshare --uts refused)")
    generated = check_as("hbingest-7d9c5b8f6-x2kqz")
    assert generated.returncode == 1, generated.stdout + generated.stderr
    output = generated.stdout + generated.stderr
    assert "auto.yaml:4:" in output and "looks like a Deployment pod's generated name" in output, output
    assert "StatefulSet" in output, output
    stable = check_as("hbingest-0")
    assert stable.returncode == 0, stable.stdout + stable.stderr


def test_a_daemon_failing_its_table_check_never_joins_the_group(daemon_factory, names):
    """Review of issue 26: with the table check running beside the subscription, a daemon whose
    table is missing joined the group before it exited, took partitions from the other member and,
    being static, left them unread until session.timeout.ms (at every restart of a crash loop). The
    tables are checked before the consumer subscribes."""
    topic, table, group = names["topic"], names["table"], "g_" + names["topic"]
    create_topic(topic, partitions=4)
    other = daemon_factory(topic, table, group=group, name="other", **{"kafka.properties": STATIC_SESSION}).start()
    wait_for(lambda: "kafka consumer: assigned " in other.log_text(), 60, "the other member assigned")
    before = len(other.log_text())
    failing = daemon_factory(topic, "missing_" + table, group=group, name="failing",
                             **{"kafka.group_instance_id": "ingest-b", "kafka.properties": STATIC_SESSION,
                                "table.create_table": False})
    with pytest.raises(AssertionError):
        failing.start()  # exits before /healthz answers
    wait_for(lambda: failing.process.poll() is not None, 60, "the failing daemon exits")
    assert failing.process.returncode == 1, failing.log_text()[-3000:]
    assert "consumer subscribed" not in failing.log_text() and "assigned" not in failing.log_text(), \
        failing.log_text()[-3000:]
    time.sleep(3)  # a rebalance it had started would show in the other member's log by now
    assert "revoked" not in other.log_text()[before:], other.log_text()[before:]
    other.stop()
