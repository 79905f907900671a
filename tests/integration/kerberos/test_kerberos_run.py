"""Issue 25 end to end: `hbingest run` through the kerberized stack's Kafka GSSAPI listener and its
kerberized Thrift2 gateway (thrift2krb, QOP privacy), logged in from keytabs by the daemon itself.
Both links' principal has 1-minute tickets: the daemon renews them while it ingests, rows
produced after the first ticket expired are stored too, and a query opens new gateway connections
with the renewed ticket. A stale keytab stops the start with one line naming the link and cause.
Skipped without a kerberized stack (HBSTACK_KERBEROS=1 stack/hbstack up)."""

import json
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "python"))
from support import (BINARY, Daemon, create_topic, login, now_ms, produce, unique, wait_for,  # noqa: E402
                     write_config)

KRB = {name: os.environ.get(name) for name in ("HBSTACK_KRB5_CONFIG", "HBSTACK_KEYTAB_DIR", "HBSTACK_REALM",
                                                "HBINGEST_KAFKA_GSSAPI", "HBINGEST_THRIFT2_KRB")}
pytestmark = pytest.mark.skipif(not all(KRB.values()),
                                reason="no kerberized stack: HBSTACK_KERBEROS=1 stack/hbstack up; "
                                       "eval \"$(HBSTACK_KERBEROS=1 stack/hbstack env)\"")


def keytab(name):
    return str(Path(KRB["HBSTACK_KEYTAB_DIR"]) / name)


def principal(name):
    return f"{name}@{KRB['HBSTACK_REALM']}"


def kerberized_config(path, topic, table, kafka_principal="hbingest-short", kafka_keytab="short.keytab"):
    return write_config(
        path, topic, table,
        **{"kafka.bootstrap_servers": KRB["HBINGEST_KAFKA_GSSAPI"],
           "kafka.properties": {"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "GSSAPI",
                                "sasl.kerberos.service.name": "kafka",
                                "sasl.kerberos.principal": principal(kafka_principal),
                                "sasl.kerberos.keytab": keytab(kafka_keytab), "auto.offset.reset": "earliest"},
           "kafka.startup_check_timeout": "20s",
           "hbase.endpoints": [KRB["HBINGEST_THRIFT2_KRB"]],
           "hbase.read_timeout": "20s",
           "hbase.sasl": {"mechanism": "GSSAPI", "principal": principal("hbingest-short"),
                          "keytab": keytab("short.keytab"), "qop": "privacy", "server_principal_host": "localhost"}})


def krb_env():
    return {"KRB5_CONFIG": KRB["HBSTACK_KRB5_CONFIG"]}


def test_run_renews_one_minute_tickets_while_ingesting_through_both_kerberized_links(tmp_path):
    topic, table = unique("krb_events"), unique("krb_rows")
    create_topic(topic, partitions=2)
    base = now_ms()
    produce(topic, [json.dumps(login(base + i, user=f"u{i:06d}")) for i in range(200)])
    config_path = tmp_path / "run.yaml"
    config = kerberized_config(config_path, topic, table)
    daemon = Daemon(config_path, config, tmp_path / "run.log", env=krb_env()).start()
    try:
        wait_for(lambda: daemon.metric("hbingest_rows_written_all_total") >= 200, 60, "the first 200 rows",
                 interval=0.5)
        first_end = daemon.metric("hbingest_kerberos_ticket_valid_until_seconds", {"link": "hbase"})
        first_kafka_end = daemon.metric("hbingest_kerberos_ticket_valid_until_seconds", {"link": "kafka"})
        assert first_end > time.time() and first_kafka_end > time.time(), daemon.diagnosis()
        # Past the first ticket's end: it was renewed (at 2/3 of its minute) and is gone now.
        wait_for(lambda: time.time() > first_end + 1, 75, "the first hbase ticket to expire", interval=1)
        renewed_end = daemon.metric("hbingest_kerberos_ticket_valid_until_seconds", {"link": "hbase"})
        assert renewed_end > first_end, daemon.diagnosis()
        # The kafka link's keeper renewed its own cache (KRB5CCNAME) under librdkafka's threads.
        assert daemon.metric("hbingest_kerberos_ticket_valid_until_seconds", {"link": "kafka"}) > first_kafka_end
        produce(topic, [json.dumps(login(base + 200 + i, user=f"u{i:06d}")) for i in range(200)])
        wait_for(lambda: daemon.metric("hbingest_rows_written_all_total") >= 400, 60, "the next 200 rows",
                 interval=0.5)
        assert daemon.metric("hbingest_kerberos_login_failures_total") == 0, daemon.diagnosis()
        assert daemon.ready(), daemon.diagnosis()
        # New gateway connections (the query pool's), made with the renewed ticket.
        url = (daemon.http + f"/v1/events?event_id=login&from={base}&to={base + 400}&limit=1000")
        with urllib.request.urlopen(url, timeout=30) as response:
            rows = json.loads(response.read())["rows"]
        assert len(rows) == 400
    finally:
        daemon.stop()
    log = daemon.log_text()
    assert "kerberos: hbase ticket for " + principal("hbingest-short") + " renewed" in log
    assert "sasl.kerberos.min.time.before.relogin" not in log  # no complaint: librdkafka's kinit is off


def test_stale_keytab_stops_the_start_naming_link_principal_and_cause(tmp_path):
    topic, table = unique("krb_events"), unique("krb_rows")
    config_path = tmp_path / "stale.yaml"
    kerberized_config(config_path, topic, table, kafka_principal="hbingest-stale", kafka_keytab="stale.keytab")
    started = time.monotonic()
    result = subprocess.run([BINARY(), "run", "--config", str(config_path)], capture_output=True, text=True,
                            timeout=60, env={**os.environ, **krb_env()})
    assert result.returncode == 1, result.stdout + result.stderr
    assert time.monotonic() - started < 30
    last = result.stderr.strip().splitlines()[-1]
    assert "kerberos login for kafka failed" in last, result.stderr
    assert principal("hbingest-stale") in last and "stale.keytab" in last and "wrong keytab" in last, last
