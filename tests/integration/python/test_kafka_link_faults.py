"""The `faults` tier, the daemon's link to the broker: latency, resets and a 30 s black hole through
a Toxiproxy server of the test's own on the address the broker's PROXIED listener advertises.
Only this daemon's link is struck, so the file runs beside others, but one at a time on that
address (RESOURCE_LOCK in tests/integration/CMakeLists.txt). The checker is fault_stream.py's."""

from fault_stream import Stream, check_recovered_and_complete, watch_rss
from support import KAFKA_PROXIED, KAFKA_VIA_PROXY, count_rows, create_topic
from toxiproxy import toxic


def test_kafka_link_latency_resets_and_a_30_s_black_hole(daemon_factory, names, proxies):
    """The same faults between the daemon and the broker: the consumer's fetches, heartbeats and
    commits (and the dead-letter producer) all go through the proxy, since the broker's PROXIED
    listener advertises the proxy's address."""
    proxies.proxy("kafka", KAFKA_PROXIED(), listen=KAFKA_VIA_PROXY())
    create_topic(names["topic"], partitions=4)
    daemon = daemon_factory(names["topic"], names["table"], **{"kafka.bootstrap_servers": KAFKA_VIA_PROXY()}).start()
    stream = Stream(names["topic"])
    with toxic(proxies, "kafka", "latency", latency=200, jitter=100), \
         toxic(proxies, "kafka", "latency", stream="upstream", latency=50, jitter=50):
        peak = watch_rss(daemon, 8)
    for _ in range(3):
        with toxic(proxies, "kafka", "reset_peer", timeout=200):
            peak = max(peak, watch_rss(daemon, 1))
        peak = max(peak, watch_rss(daemon, 2))
    with toxic(proxies, "kafka", "timeout", timeout=0), toxic(proxies, "kafka", "timeout", stream="upstream", timeout=0):
        stored_before = count_rows(names["table"])
        peak = max(peak, watch_rss(daemon, 30))
        # Nothing arrives, so nothing new can be stored; what was consumed before is drained.
        assert daemon.process.poll() is None, "the daemon stayed up without its broker"
    print(f"kafka link: {stored_before} rows stored when the black hole began")
    check_recovered_and_complete(daemon, stream, names["table"], peak, "latency, resets and a black hole on Kafka")
