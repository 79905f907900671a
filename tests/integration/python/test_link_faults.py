"""The `faults` tier, the daemon's link to the gateway: a Toxiproxy server of the test's own between
the daemon and the Thrift2 gateway adds latency and jitter, throttles to 100 KB/s, resets the
connections every few seconds, or swallows everything (a black hole: 60 s under four daemons at
their byte bound, and a SIGTERM while writes hang), while events stream in. Only the test's own
proxy is struck, so this file runs beside others. The checker is fault_stream.py's."""

import signal
import time

from fault_stream import Stream, check_recovered_and_complete, start_daemon, watch_rss
from support import THRIFT2, count_rows, create_topic, group_committed, unique, wait_for
from toxiproxy import toxic


def test_gateway_link_latency_and_jitter(daemon_factory, names, proxies):
    endpoint = proxies.proxy("gateway", THRIFT2())
    daemon = start_daemon(daemon_factory, names, endpoint)
    stream = Stream(names["topic"])
    with toxic(proxies, "gateway", "latency", latency=200, jitter=100), \
         toxic(proxies, "gateway", "latency", stream="upstream", latency=50, jitter=50):
        peak = watch_rss(daemon, 15)
    check_recovered_and_complete(daemon, stream, names["table"], peak, "200 ms latency with jitter")


def test_gateway_link_throttled_to_100_kb_per_s(daemon_factory, names, proxies):
    endpoint = proxies.proxy("gateway", THRIFT2())
    daemon = start_daemon(daemon_factory, names, endpoint)
    stream = Stream(names["topic"])
    with toxic(proxies, "gateway", "bandwidth", stream="upstream", rate=100):
        peak = watch_rss(daemon, 15)
    check_recovered_and_complete(daemon, stream, names["table"], peak, "100 KB/s to the gateway")


def test_gateway_link_reset_every_few_seconds(daemon_factory, names, proxies):
    endpoint = proxies.proxy("gateway", THRIFT2())
    daemon = start_daemon(daemon_factory, names, endpoint)
    stream = Stream(names["topic"])
    peak = 0
    for _ in range(5):
        with toxic(proxies, "gateway", "reset_peer", timeout=200):
            peak = max(peak, watch_rss(daemon, 1))
        peak = max(peak, watch_rss(daemon, 2))
    assert daemon.metric("hbingest_write_retries_total") > 0, "the resets reached the writers"
    check_recovered_and_complete(daemon, stream, names["table"], peak, "TCP resets every 3 s")


def test_sigterm_during_a_black_hole_ends_within_the_shutdown_budget(daemon_factory, names, proxies):
    """SIGTERM while every write hangs: drain, final commit, leaving the group and stopping the
    writers must all end within shutdown_deadline (10 s here) plus the 5 s backstop, well before a
    service manager's SIGKILL; what was committed is stored, and a restart stores the rest."""
    endpoint = proxies.proxy("gateway", THRIFT2())
    create_topic(names["topic"], partitions=4)
    group = unique("group")
    daemon = daemon_factory(names["topic"], names["table"], group=group, name="first",
                            **{"hbase.endpoints": [endpoint]}).start()
    stream = Stream(names["topic"])
    wait_for(lambda: daemon.metric("hbingest_rows_written_all_total") >= 2_000, 120, "ingest running")
    with toxic(proxies, "gateway", "timeout", timeout=0), toxic(proxies, "gateway", "timeout", stream="upstream", timeout=0):
        time.sleep(3)  # writes in flight and hanging
        started = time.time()
        daemon.process.send_signal(signal.SIGTERM)
        code = daemon.process.wait(60)
        took = time.time() - started
    print(f"SIGTERM during a black hole: exit {code} after {took:.1f} s (shutdown_deadline 10 s)")
    assert took < 10 + 5 + 1, f"shutdown took {took:.1f} s: past shutdown_deadline + the backstop"
    committed, stored = group_committed(group, names["topic"]), count_rows(names["table"])
    assert committed <= stored, f"{committed} events committed but only {stored} rows stored"
    stream.join()
    again = daemon_factory(names["topic"], names["table"], group=group, name="second").start()
    wait_for(lambda: again.metric("hbingest_committed_offset") >= len(stream.events) and
             again.metric("hbingest_consumer_lag") == 0, 300, "the restarted daemon to catch up")
    again.stop()
    rows = count_rows(names["table"])
    assert rows == len(stream.events), f"{rows} rows for {len(stream.events)} events"
