"""Issue 7 service contract: sd_notify under a stand-in for systemd (a real NOTIFY_SOCKET), SIGHUP
log-level reload, JSON log lines, graceful and immediate stops."""

import json
import signal
import socket
import time
from pathlib import Path

from support import Daemon, create_topic, login, now_ms, produce, wait_for, write_config


def notifications(sock, seconds):
    """Datagrams received on the notify socket within `seconds`."""
    messages = []
    deadline = time.time() + seconds
    while time.time() < deadline:
        sock.settimeout(max(0.05, deadline - time.time()))
        try:
            messages.append(sock.recv(4096).decode())
        except socket.timeout:
            break
    return messages


def test_sd_notify_ready_status_watchdog_and_stopping(tmp_path, names):
    create_topic(names["topic"], partitions=1)
    notify_path = str(tmp_path / "notify.sock")
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(notify_path)
    config_path = tmp_path / "d.yaml"
    config = write_config(config_path, names["topic"], names["table"])
    daemon = Daemon(config_path, config, tmp_path / "d.log",
                    env={"NOTIFY_SOCKET": notify_path, "WATCHDOG_USEC": "2000000"})
    try:
        daemon.start()
        seen = notifications(sock, 4)
        assert "READY=1" in seen
        assert any(m.startswith("STATUS=") and "events/s" in m for m in seen), seen
        assert seen.count("WATCHDOG=1") >= 2, "pings at half of WatchdogSec while the loop turns"
        daemon.process.send_signal(signal.SIGTERM)
        assert daemon.process.wait(30) == 0
        assert "STOPPING=1" in notifications(sock, 1) + seen
    finally:
        daemon.kill()
        sock.close()


def test_sighup_reloads_the_log_level_and_json_lines_parse(tmp_path, names):
    topic, table = names["topic"], names["table"]
    create_topic(topic, partitions=1)
    config_path = tmp_path / "d.yaml"
    config = write_config(config_path, topic, table, **{"logging.level": "warn", "logging.format": "json"})
    daemon = Daemon(config_path, config, tmp_path / "d.log").start()
    try:
        produce(topic, ["not json"])
        wait_for(lambda: daemon.metric("hbingest_dead_letters_total") >= 1, 60, "first dead letter")
        assert "dead-lettering" not in daemon.log_text(), "info lines are off at level warn"

        write_config(config_path, topic, table, group=config["kafka"]["group_id"],
                     **{"logging.level": "info", "logging.format": "json", "http.listen": config["http"]["listen"]})
        daemon.process.send_signal(signal.SIGHUP)
        wait_for(lambda: "log level reloaded" in daemon.log_text(), 10, "the reload to be logged")
        produce(topic, ['{"ts": 1}'])  # another reason: the same one is rate-limited for 10 s
        wait_for(lambda: "dead-lettering" in daemon.log_text(), 60, "an info line after the reload")
        for line in Path(daemon.log_path).read_text().splitlines():
            if line.startswith("{"):
                record = json.loads(line)  # every JSON log line is one valid object
                assert "level" in record and "msg" in record, record
    finally:
        daemon.stop()


def test_sigpipe_is_ignored_even_without_the_http_port(tmp_path, names):
    """A peer closing mid-write (a TLS terminator in front of the gateway: OpenSSL's writes cannot
    pass MSG_NOSIGNAL) must be an EPIPE error, not the daemon's end. SIGPIPE used to be ignored only
    as a side effect of cpp-httplib's server constructor, so `run` with http.enabled false, and every
    call before the HTTP server existed, died of it."""
    import subprocess

    from support import BINARY

    create_topic(names["topic"], partitions=1)
    config_path = tmp_path / "nohttp.yaml"
    write_config(config_path, names["topic"], names["table"], **{"http.enabled": False})
    with open(tmp_path / "nohttp.log", "wb") as log:
        process = subprocess.Popen([BINARY(), "run", "--config", str(config_path)], stdout=log,
                                   stderr=subprocess.STDOUT)
    try:
        def ignored_signals():
            for line in Path(f"/proc/{process.pid}/status").read_text().splitlines():
                if line.startswith("SigIgn:"):
                    return int(line.split()[1], 16)
            return 0
        # main() sets it first thing; give the exec a moment.
        sigpipe_bit = 1 << (signal.SIGPIPE - 1)
        wait_for(lambda: process.poll() is not None or ignored_signals() & sigpipe_bit, 10, "SIGPIPE ignored")
        assert process.poll() is None, (tmp_path / "nohttp.log").read_text()[-2000:]
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
