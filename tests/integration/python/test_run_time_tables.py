"""Tables a route's template makes at run time (a value its pattern allows, seen first in an event):
under table.create_table the running daemon creates each one, writes its rows there and reports it in
hbingest_table_available; a value past max_tables makes no table and no metric series."""

import json

from support import count_rows, create_topic, hbase, login, now_ms, produce, wait_for

REGIONS = ["eu", "us", "ap"]
PER_REGION = 50


def test_a_patterns_new_values_get_their_tables_created_and_written_while_running(daemon_factory, names):
    topic, base = names["topic"], names["table"]
    create_topic(topic, partitions=1)  # one partition: the events reach the route in the order sent
    route = {"event_types": ["login", "order"], "table": base + "_${field:region}",
             "table_values": {"field:region": {"pattern": "[a-z]{2}"}}, "max_tables": len(REGIONS),
             "preset": "events", "preset_params": {"buckets": "4"}}
    # Nothing to create at start: the pattern enumerates no table, so the daemon starts without any.
    daemon = daemon_factory(topic, base, routes=[route]).start()
    ts = now_ms()
    events = [login(ts - i, "u%06d" % i, region=region) for region in REGIONS for i in range(PER_REGION)]
    events.append(login(ts, "u999999", region="zz"))  # a fourth table: over max_tables
    produce(topic, [json.dumps(e) for e in events])

    wait_for(lambda: daemon.metric("hbingest_committed_offset") >= len(events), 90, "every event handled")
    connection = hbase()
    try:
        tables = {name.decode() for name in connection.tables()}
    finally:
        connection.close()
    assert {base + "_" + r for r in REGIONS} <= tables
    assert base + "_zz" not in tables, "a value past max_tables makes no table"
    for region in REGIONS:
        assert count_rows(base + "_" + region) == PER_REGION, region
        assert daemon.metric("hbingest_table_available", {"table": f"default:{base}_{region}"}) == 1
    series = [line for line in daemon.metrics_text().splitlines()
              if line.startswith("hbingest_table_available{") and base in line]
    assert len(series) == len(REGIONS), series
    assert "a route's template made it" in daemon.log_text()
    daemon.stop()
