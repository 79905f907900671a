"""Issue 7: the live /metrics passes promtool, and a real Prometheus server scrapes the daemon."""

import json
import subprocess
import time
import urllib.parse
import urllib.request

from support import create_topic, free_port, login, now_ms, produce, wait_for


def test_live_scrape_passes_promtool_and_prometheus_queries_our_counter(daemon_factory, names, tmp_path):
    topic, table = names["topic"], names["table"]
    create_topic(topic, partitions=2)
    produce(topic, [json.dumps(login(now_ms() - i)) for i in range(500)] + ["not json"])
    daemon = daemon_factory(topic, table).start()
    wait_for(lambda: daemon.metric("hbingest_rows_written_all_total") >= 500, 60, "rows written")
    # Lag comes from librdkafka's statistics, every statistics_interval (1 s here).
    wait_for(lambda: "hbingest_consumer_lag{" in daemon.metrics_text(), 30, "the first lag report")

    exposition = daemon.metrics_text()
    check = subprocess.run(["promtool", "check", "metrics"], input=exposition, capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    for family in ("hbingest_events_consumed_total", "hbingest_rows_written_total", "hbingest_batch_rows_bucket",
                   "hbingest_write_latency_seconds_bucket", "hbingest_end_to_end_latency_seconds_count",
                   "hbingest_salt_bucket_rows_total", "hbingest_committed_offset", "hbingest_consumer_lag",
                   "hbingest_inflight_events", "hbingest_events_invalid_total", "hbingest_build_info",
                   "hbingest_ready 1"):
        assert family in exposition, family

    port = free_port()
    (tmp_path / "prometheus.yml").write_text(
        "global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
        "scrape_configs:\n"
        f"  - job_name: hbingest\n    static_configs: [{{targets: ['{daemon.http[len('http://'):]}']}}]\n")
    prometheus = subprocess.Popen(
        ["prometheus", f"--config.file={tmp_path / 'prometheus.yml'}", f"--storage.tsdb.path={tmp_path / 'tsdb'}",
         f"--web.listen-address=127.0.0.1:{port}"],
        stdout=open(tmp_path / "prometheus.log", "wb"), stderr=subprocess.STDOUT)
    try:
        def query():
            url = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode(
                {"query": "hbingest_rows_written_all_total"})
            try:
                result = json.loads(urllib.request.urlopen(url, timeout=2).read())["data"]["result"]
            except OSError:
                return None
            return result and float(result[0]["value"][1]) >= 500
        wait_for(query, 60, "Prometheus to scrape the rows-written counter")
    finally:
        prometheus.terminate()
        prometheus.wait(30)
        daemon.stop()
