"""Issue 13, item 5: secrets never leak. A config full of secrets, each holding the canary
string, goes through everything that prints: check-config (with errors, and --print-effective),
`hbingest run` at debug level with librdkafka's own debug output on (against an unreachable
broker: it retries, logs and answers /metrics and /readyz meanwhile), a start-up failure inside
librdkafka, and metrics-catalog. The canary appears nowhere.

The HBase table is created with happybase beforehand: `run` checks its route table before it starts
consuming, and table.create_table would also create the dead-letter topic on the (unreachable)
broker."""

import json
import os
import signal
import subprocess
import time
import urllib.error
import urllib.request

from support import BINARY, Daemon, free_port, hbase, run_hbingest, unique, wait_for, write_config

CANARY = "LEAKCANARY"


def secret(name):
    """A distinct secret value per property, each carrying the canary."""
    return f"{CANARY}-{name}-{unique('s')}"


def assert_no_canary(text, where):
    at = text.find(CANARY)
    assert at < 0, f"secret leaked in {where}: ...{text[max(0, at - 200):at + 100]}..."


def secret_config(tmp_path, table, extra_properties=None):
    """A daemon config whose every secret-carrying setting holds a canary: literal values, ${file:}
    files, ${ENV} variables, and a ${file:} read into a key whose name does not say secret."""
    (tmp_path / "sasl_password").write_text(secret("sasl-file") + "\n")
    (tmp_path / "token").write_text(secret("bearer-token") + "\n")
    (tmp_path / "client_id").write_text(secret("file-into-plain-key") + "\n")
    env = {"HB_TEST_KEYSTORE_PW": secret("keystore-env")}
    properties = {
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "PLAIN",
        "sasl.username": "ingest",
        "sasl.password": "${file:sasl_password}",
        "ssl.key.password": secret("ssl-key-password"),
        "ssl.keystore.password": "${HB_TEST_KEYSTORE_PW}",
        "sasl.oauthbearer.config": "principal=" + secret("oauth-config"),
        "client.id": "${file:client_id}",
        # librdkafka's own debug output, every context: connection attempts, SASL, configuration.
        "debug": "all",
        "reconnect.backoff.ms": "100",
        **(extra_properties or {}),
    }
    config_path = tmp_path / "secrets.yaml"
    config = write_config(
        config_path, unique("t"), table,
        **{"kafka.bootstrap_servers": f"127.0.0.1:{free_port()}",  # nothing listens there
           "kafka.properties": properties,
           "dlq.properties": {"sasl.password": secret("dlq-sasl-password")},
           "http.token_file": "token",
           "table.create_table": False,
           "logging.level": "debug"})
    return config_path, config, env


def create_table(table):
    connection = hbase()
    try:
        connection.create_table(table, {"d": dict(time_to_live=600)})
    finally:
        connection.close()


def test_check_config_prints_no_secret_with_errors_or_effective(tmp_path, monkeypatch):
    # Debian's librdkafka is built without OIDC, so the OIDC properties are only checked here.
    config_path, config, env = secret_config(
        tmp_path, unique("tbl"), {"sasl.oauthbearer.client.secret": secret("oauth-client"),
                                  "sasl.oauthbearer.extensions": "id=" + secret("oauth-ext")})
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    effective = run_hbingest("check-config", str(config_path), "--print-effective")
    assert "sasl.password: \"***\"" in effective.stdout
    assert "unsafe" not in effective.stdout
    assert "sasl_plaintext with sasl.mechanism PLAIN" in effective.stderr  # the warning, without the value
    assert_no_canary(effective.stdout + effective.stderr, "check-config --print-effective")

    # The same secrets where they cannot be valid: wrong types, a YAML-looking file, not host:port.
    (tmp_path / "yamlish").write_text("{[: \"" + secret("yamlish") + "\n  - ]\n")
    broken = dict(config)
    broken["writer"] = {"writers": "${file:sasl_password}", "batch_max_bytes": "12${HB_TEST_KEYSTORE_PW}",
                        "linger": "${file:yamlish}"}
    broken["hbase"] = {"endpoints": ["${file:token}"], "namespace": "${file:yamlish}"}
    broken["http"] = {"listen": "${file:token}", "token_file": "token"}
    broken["decode"] = {"columns": "${file:client_id}"}
    (tmp_path / "broken.yaml").write_text(json.dumps(broken))
    failed = run_hbingest("check-config", str(tmp_path / "broken.yaml"), "--print-effective", check=False)
    assert failed.returncode == 1, failed.stderr
    assert "writer.writers: expected an integer, got the value of '${file:sasl_password}'" in failed.stderr
    assert "hbase.endpoints[0]: the value of '${file:token}' is not host:port" in failed.stderr
    assert_no_canary(failed.stdout + failed.stderr, "check-config errors")


def test_running_daemon_logs_and_metrics_hold_no_secret(tmp_path):
    table = unique("tbl")
    create_table(table)
    config_path, config, env = secret_config(tmp_path, table)
    daemon = Daemon(config_path, config, tmp_path / "run.log", env=env).start()
    try:
        # librdkafka retries the unreachable broker and logs every attempt at debug.
        wait_for(lambda: daemon.log_text().count("#consumer-1 ") >= 200, 30, "librdkafka debug lines")
        time.sleep(2)
        metrics = daemon.metrics_text()
        assert "hbingest_build_info" in metrics
        assert_no_canary(metrics, "/metrics")
        try:
            readyz = urllib.request.urlopen(daemon.http + "/readyz", timeout=5).read().decode()
        except urllib.error.HTTPError as not_ready:  # 503 with the reasons, while Kafka is unreachable
            readyz = not_ready.read().decode()
        assert_no_canary(readyz, "/readyz")
        daemon.process.send_signal(signal.SIGTERM)
        daemon.process.wait(60)
    finally:
        daemon.kill()
    log = daemon.log_text()
    assert "unsafe setting:" in log and "sasl_plaintext with sasl.mechanism PLAIN" in log
    # librdkafka redacts its own sensitive properties in its configuration dump, but it prints
    # client.id, here read from a ${file:}, and names the client after it: our scrubber caught both.
    assert "CONF: [thrd:app]:   client.id = ***" in log and "***#consumer-1" in log
    assert_no_canary(log, "the daemon's log")


def test_startup_failure_inside_librdkafka_prints_no_secret(tmp_path):
    table = unique("tbl")
    create_table(table)
    # A real certificate (its key thrown away) and, as the private key, the canary: librdkafka
    # refuses the key when it creates the client.
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=hbingest-test",
                    "-days", "1", "-keyout", str(tmp_path / "unused.key"), "-out", str(tmp_path / "cert.pem")],
                   check=True, capture_output=True)
    config_path, config, env = secret_config(tmp_path, table, {
        "security.protocol": "SSL", "ssl.certificate.pem": (tmp_path / "cert.pem").read_text(),
        "ssl.key.pem": "-----BEGIN PRIVATE KEY-----\n" + secret("pem") + "\n-----END PRIVATE KEY-----"})
    result = subprocess.run([BINARY(), "run", "--config", str(config_path)], capture_output=True, text=True,
                            timeout=120, env={**os.environ, **env})
    assert result.returncode != 0, result.stderr[-2000:]
    assert "cannot create client: ssl.key.pem failed" in result.stderr, result.stderr[-2000:]
    assert_no_canary(result.stdout + result.stderr, "the start-up error")


def test_metrics_catalog_holds_no_secret():
    assert_no_canary(run_hbingest("metrics-catalog").stdout, "metrics-catalog")
