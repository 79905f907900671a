"""Issue 13, items 3 and 4, on the real stack: the daemon and its dead-letter producer through the
broker's SSL (mutual TLS) and SASL_SSL/SCRAM-SHA-512 listeners, and to HBase's Thrift2 gateway through
TLS (stunnel in front of it: HBase 2.6 has no TLS for the binary gateway). A wrong CA, a wrong password,
an expired certificate or a certificate for another host stop the start with one message naming the
cause, within a bounded time.

The stack made its CA, server and client certificates at `hbstack up` ($HBINGEST_TLS_DIR); the
unrelated CA, the expired certificate and the certificate for another host are made here with openssl."""

import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from support import (BINARY, KAFKA, THRIFT2, Daemon, consume_all, count_rows, create_topic, env, free_port,
                     group_committed, login, now_ms, produce, run_hbingest, unique, wait_for, write_config)

TLS_DIR = lambda: Path(env("HBINGEST_TLS_DIR"))  # noqa: E731
KAFKA_SSL = lambda: env("HBINGEST_KAFKA_SSL")  # noqa: E731
KAFKA_SASL_SSL = lambda: env("HBINGEST_KAFKA_SASL_SSL")  # noqa: E731
THRIFT2_TLS = lambda: env("HBINGEST_THRIFT2_TLS")  # noqa: E731

# A start that fails must fail within this (the startup check stops on the first TLS/SASL failure;
# the timeout below only bounds a broker that never answers).
STARTUP_BOUND_S = 30


def openssl(*args, cwd):
    subprocess.run(["openssl", *args], cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def pki(tmp_path_factory):
    """Certificates the stack does not have: an unrelated CA, a client certificate of the stack's CA
    that expired in 2020, and a server certificate of the stack's CA for another host."""
    d = tmp_path_factory.mktemp("pki")
    stack = TLS_DIR()
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    openssl("req", "-x509", *ec, "-keyout", "other-ca.key", "-out", "other-ca.pem", "-days", "30",
            "-subj", "/CN=unrelated CA", cwd=d)
    # Expired: `openssl ca` is the one OpenSSL 3.0 command that takes explicit validity dates.
    openssl("req", *ec, "-keyout", "expired.key", "-out", "expired.csr", "-subj", "/CN=hbingest", cwd=d)
    (d / "index.txt").write_text("")
    (d / "serial").write_text("1000\n")
    (d / "ca.cnf").write_text(
        "[ca]\ndefault_ca = test\n[test]\ndatabase = index.txt\nserial = serial\nnew_certs_dir = .\n"
        "default_md = sha256\npolicy = any\nx509_extensions = ext\n[any]\ncommonName = supplied\n"
        "[ext]\nextendedKeyUsage = clientAuth\n")
    openssl("ca", "-batch", "-config", "ca.cnf", "-cert", str(stack / "ca.pem"), "-keyfile", str(stack / "ca.key"),
            "-startdate", "20200101000000Z", "-enddate", "20200201000000Z", "-notext", "-in", "expired.csr",
            "-out", "expired.pem", cwd=d)
    # A gateway certificate the stack's CA signed, but for a host that is not 127.0.0.1.
    openssl("req", *ec, "-keyout", "other-host.key", "-out", "other-host.csr", "-subj", "/CN=gateway.example.com",
            cwd=d)
    (d / "other-host.ext").write_text("subjectAltName=DNS:gateway.example.com\nextendedKeyUsage=serverAuth\n")
    openssl("x509", "-req", "-in", "other-host.csr", "-CA", str(stack / "ca.pem"), "-CAkey", str(stack / "ca.key"),
            "-CAcreateserial", "-CAserial", "other.srl", "-days", "30", "-extfile", "other-host.ext",
            "-out", "other-host.pem", cwd=d)
    return d


def ssl_properties(ca=None, cert=None, key=None):
    stack = TLS_DIR()
    return {"security.protocol": "ssl", "ssl.ca.location": str(ca or stack / "ca.pem"),
            "ssl.certificate.location": str(cert or stack / "client.pem"),
            "ssl.key.location": str(key or stack / "client.key")}


def sasl_properties(password_file):
    return {"security.protocol": "sasl_ssl", "ssl.ca.location": str(TLS_DIR() / "ca.pem"),
            "sasl.mechanisms": "SCRAM-SHA-512", "sasl.username": env("HBINGEST_KAFKA_SASL_USER"),
            # From a file, as a deployment would (${file:} is resolved at load, never printed).
            "sasl.password": "${file:%s}" % password_file}


def hbase_tls(ca=None, **extra):
    return {"hbase.endpoints": [THRIFT2_TLS()],
            "hbase.tls": {"enabled": True, "ca_file": str(ca or TLS_DIR() / "ca.pem"), **extra}}


def tls_config(tmp_path, name, bootstrap, properties, topic=None, table=None, hbase=None, **overrides):
    topic = topic or unique("t")
    table = table or unique("tbl")
    config_path = tmp_path / f"{name}.yaml"
    config = write_config(config_path, topic, table, **{"kafka.bootstrap_servers": bootstrap,
                                                       "kafka.properties": properties,
                                                       **(hbase if hbase is not None else hbase_tls()), **overrides})
    return config_path, config, topic, table


@pytest.fixture(scope="module")
def existing_table(tmp_path_factory):
    """A route table made beforehand, so that `run` (create_table: false) reaches Kafka through its
    consumer first, as a deployment whose tables exist does."""
    tmp = tmp_path_factory.mktemp("table")
    config_path, _, _, table = tls_config(tmp, "bootstrap", KAFKA(), {})
    run_hbingest("bootstrap", "--config", str(config_path))
    return table


def failed_start(config_path, log_path):
    """Runs `hbingest run` expecting it to stop by itself; returns (exit code, output, seconds)."""
    start = time.monotonic()
    with open(log_path, "wb") as log:
        process = subprocess.Popen([BINARY(), "run", "--config", str(config_path)], stdout=log,
                                   stderr=subprocess.STDOUT)
        try:
            code = process.wait(STARTUP_BOUND_S + 15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
            raise AssertionError(f"hbingest run still running after {STARTUP_BOUND_S + 15}s: "
                                 f"{Path(log_path).read_text(errors='replace')[-3000:]}")
    return code, Path(log_path).read_text(errors="replace"), time.monotonic() - start


@pytest.mark.parametrize("listener", ["ssl", "sasl_ssl"])
def test_events_in_rows_out_poison_to_dlq_offsets_committed_through_tls(tmp_path, listener):
    """Kafka through the SSL (mutual TLS) or SASL_SSL listener, HBase through TLS; the dead-letter
    producer uses the same listener and settings."""
    if listener == "ssl":
        bootstrap, properties = KAFKA_SSL(), ssl_properties()
    else:
        password = tmp_path / "kafka-password"
        password.write_text(env("HBINGEST_KAFKA_SASL_PASSWORD") + "\n")
        bootstrap, properties = KAFKA_SASL_SSL(), sasl_properties(password)
    config_path, config, topic, table = tls_config(tmp_path, listener, bootstrap, properties)
    dlq = config["dlq"]["topic"]
    create_topic(topic, partitions=2)
    create_topic(dlq, partitions=1)
    base = now_ms()
    good = [json.dumps(login(base - i, "u%d" % i)) for i in range(200)]
    produce(topic, good + ['{"event_id": "login", "ts": '])  # the last one is not JSON

    daemon = Daemon(config_path, config, tmp_path / f"{listener}.log").start()
    try:
        wait_for(lambda: daemon.metric("hbingest_rows_written_all_total") >= len(good), 60, "rows written")
        wait_for(lambda: daemon.metric("hbingest_dead_letters_total", {"outcome": "delivered"}) >= 1, 30,
                 "the poison event dead-lettered")
        wait_for(lambda: daemon.metric("hbingest_committed_offset") >= len(good) + 1, 30, "offsets committed")
        assert daemon.metric("hbingest_kafka_security_errors_total") == 0
        # A query through the same TLS link to the gateway, by the daemon's HTTP API.
        body = json.loads(urlopen_text(daemon.http + f"/v1/events?event_id=login&from={base - 10_000}"
                                       f"&to={base + 1}&limit=1000"))
        assert body["count"] == len(good)
    finally:
        daemon.stop()
    log = daemon.log_text()
    assert "TLS failed" not in log and "SASL authentication failed" not in log

    assert count_rows(table) == len(good), "rows read back by an independent client (happybase, Thrift1)"
    letters = consume_all(dlq, 1, timeout=30)
    assert [m.value() for m in letters] == [b'{"event_id": "login", "ts": ']
    # Offsets committed for the group (poison included), as the broker has them.
    assert group_committed(config["kafka"]["group_id"], topic) == len(good) + 1


def urlopen_text(url):
    import urllib.request
    return urllib.request.urlopen(url, timeout=10).read().decode()


def test_query_command_through_tls_and_plain_text_refused(tmp_path):
    """`hbingest query` reaches the gateway through the terminator; the TLS port refuses plain Thrift."""
    config_path, _, _, table = tls_config(tmp_path, "query", KAFKA(), {})
    run_hbingest("bootstrap", "--config", str(config_path))
    result = run_hbingest("query", "--config", str(config_path), "--event-id", "login", "--from", "0",
                          "--to", str(now_ms()), "--format", "json")
    assert json.loads(result.stdout)["count"] == 0

    plain_path, _, _, _ = tls_config(tmp_path, "plain", KAFKA(), {}, table=table,
                                     hbase={"hbase.endpoints": [THRIFT2_TLS()]})
    result = run_hbingest("query", "--config", str(plain_path), "--event-id", "login", "--from", "0",
                          "--to", str(now_ms()), check=False, timeout=60)
    assert result.returncode != 0, "plain Thrift to the TLS port must not work"


@pytest.mark.parametrize("case", ["wrong_ca", "expired_client_cert", "wrong_password", "wrong_dlq_password"])
def test_kafka_misconfiguration_stops_the_start_with_its_cause(tmp_path, pki, existing_table, case):
    client, overrides = "consumer", {}
    if case == "wrong_ca":
        bootstrap, properties = KAFKA_SSL(), ssl_properties(ca=pki / "other-ca.pem")
        expected = ["TLS failed", "certificate verify failed", f"ssl.ca.location={pki / 'other-ca.pem'}"]
    elif case == "expired_client_cert":
        bootstrap, properties = KAFKA_SSL(), ssl_properties(cert=pki / "expired.pem", key=pki / "expired.key")
        # The broker only says "certificate unknown"; the daemon names the reason from the file.
        expected = ["TLS failed", "alert certificate unknown", f"ssl.certificate.location={pki / 'expired.pem'}",
                    f"the client certificate {pki / 'expired.pem'} expired on 2020-02-01 00:00:00 UTC"]
    else:
        password = tmp_path / "wrong-password"
        password.write_text("not-the-password\n")
        expected = ["SASL authentication failed", "SCRAM-SHA-512",
                    f"sasl.username={env('HBINGEST_KAFKA_SASL_USER')}"]
        if case == "wrong_password":
            bootstrap, properties = KAFKA_SASL_SSL(), sasl_properties(password)
        else:  # the consumer's password is right; the dead-letter producer's own one is not
            good = tmp_path / "password"
            good.write_text(env("HBINGEST_KAFKA_SASL_PASSWORD") + "\n")
            bootstrap, properties = KAFKA_SASL_SSL(), sasl_properties(good)
            overrides = {"dlq.properties": {"sasl.password": "${file:%s}" % password}}
            client = "producer"
    config_path, _, _, _ = tls_config(tmp_path, case, bootstrap, properties, table=existing_table,
                                      **{"table.create_table": False, **overrides})
    code, output, seconds = failed_start(config_path, tmp_path / f"{case}.log")
    assert code != 0, output[-3000:]
    assert seconds < STARTUP_BOUND_S, f"took {seconds:.1f}s to give up"
    # One message with the cause, as the command's last words.
    last = output.strip().splitlines()[-1]
    assert last.startswith(f"hbingest run: kafka {client}: "), output[-3000:]
    for needle in expected:
        assert needle in last, f"{needle!r} missing from: {last}"
    assert sum(line.count("TLS failed") + line.count("SASL authentication failed")
               for line in output.splitlines()) == 1, output[-3000:]
    assert "not-the-password" not in output


def stunnel_in_front_of_thrift2(tmp_path, cert, key, client_ca=None):
    """A second TLS terminator, run by the test, presenting `cert` in front of the stack's gateway;
    with `client_ca` it requires a client certificate of that CA."""
    port = free_port()
    conf = tmp_path / "stunnel.conf"
    conf.write_text(f"foreground = yes\npid =\nsyslog = no\n[t]\naccept = 127.0.0.1:{port}\n"
                    f"connect = {THRIFT2()}\ncert = {cert}\nkey = {key}\n"
                    + (f"verifyChain = yes\nCAfile = {client_ca}\n" if client_ca else ""))
    binary = "stunnel4" if subprocess.run(["which", "stunnel4"], capture_output=True).returncode == 0 else "stunnel"
    process = subprocess.Popen([binary, str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_for(lambda: _port_open(port), 10, "test stunnel listening")
    return process, f"127.0.0.1:{port}"


def _port_open(port):
    import socket
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


def test_gateway_wrong_ca_stops_the_start_naming_gateway_and_cause(tmp_path, pki):
    config_path, _, _, _ = tls_config(tmp_path, "gw_ca", KAFKA(), {}, hbase=hbase_tls(ca=pki / "other-ca.pem"))
    code, output, seconds = failed_start(config_path, tmp_path / "gw_ca.log")
    assert code != 0 and seconds < STARTUP_BOUND_S, output[-3000:]
    last = output.strip().splitlines()[-1]
    assert f"TLS to Thrift2 gateway {THRIFT2_TLS()} failed" in last, output[-3000:]
    assert f"does not verify against hbase.tls.ca_file '{pki / 'other-ca.pem'}'" in last, last


def test_gateway_hostname_mismatch_refused_while_verification_is_on(tmp_path, pki):
    process, address = stunnel_in_front_of_thrift2(tmp_path, pki / "other-host.pem", pki / "other-host.key")
    try:
        table = unique("tbl")
        verified, _, _, _ = tls_config(tmp_path, "verified", KAFKA(), {}, table=table,
                                       hbase={"hbase.endpoints": [address],
                                              "hbase.tls": {"enabled": True, "ca_file": str(TLS_DIR() / "ca.pem")}})
        result = run_hbingest("bootstrap", "--config", str(verified), check=False, timeout=60)
        assert result.returncode != 0, result.stdout
        assert f"TLS to Thrift2 gateway {address} failed" in result.stderr, result.stderr
        assert "does not name host '127.0.0.1'" in result.stderr, result.stderr
        # The same terminator, chain still verified, host name check off: it is the name that was refused.
        unverified, _, _, _ = tls_config(tmp_path, "unverified", KAFKA(), {}, table=table,
                                         hbase={"hbase.endpoints": [address],
                                                "hbase.tls": {"enabled": True, "ca_file": str(TLS_DIR() / "ca.pem"),
                                                              "verify_hostname": False}})
        run_hbingest("bootstrap", "--config", str(unverified))
        # ...and with the name check off the chain is still verified: an unrelated CA is refused.
        other_ca, _, _, _ = tls_config(tmp_path, "other_ca", KAFKA(), {}, table=table,
                                       hbase={"hbase.endpoints": [address],
                                              "hbase.tls": {"enabled": True, "ca_file": str(pki / "other-ca.pem"),
                                                            "verify_hostname": False}})
        result = run_hbingest("bootstrap", "--config", str(other_ca), check=False, timeout=60)
        assert result.returncode != 0 and "does not verify against hbase.tls.ca_file" in result.stderr, result.stderr
    finally:
        process.terminate()
        process.wait(10)


def set_scram_password(password):
    """Kafka's Admin API (AlterUserScramCredentials, KIP-554) over the plaintext listener."""
    from confluent_kafka.admin import AdminClient, ScramCredentialInfo, ScramMechanism, UserScramCredentialUpsertion
    admin = AdminClient({"bootstrap.servers": KAFKA()})
    upsert = UserScramCredentialUpsertion(env("HBINGEST_KAFKA_SASL_USER"),
                                          ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 4096), password.encode())
    for future in admin.alter_user_scram_credentials([upsert]).values():
        future.result(timeout=30)


def readyz(daemon):
    import urllib.error
    import urllib.request
    try:
        with urllib.request.urlopen(daemon.http + "/readyz", timeout=5) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as e:
        return e.code, e.read().decode()


def test_password_changed_while_running_is_shown_not_fatal_and_heals(tmp_path):
    """After startup a SASL failure (the password changed under a running daemon) must not stop it:
    counted, named by /readyz, and gone once the password is right again, without a restart."""
    password = tmp_path / "kafka-password"
    password.write_text(env("HBINGEST_KAFKA_SASL_PASSWORD") + "\n")
    # The dead-letter producer drops its idle connection after 1 s, so its next letter reconnects.
    config_path, config, topic, _ = tls_config(tmp_path, "rotated", KAFKA_SASL_SSL(), sasl_properties(password),
                                               **{"dlq.properties": {"connections.max.idle.ms": "1000"}})
    create_topic(topic, partitions=1)
    create_topic(config["dlq"]["topic"], partitions=1)
    daemon = Daemon(config_path, config, tmp_path / "rotated.log").start()
    try:
        wait_for(daemon.ready, 30, "/readyz 200")
        set_scram_password("changed-" + unique("p"))
        time.sleep(2)  # the producer's connection is idle-closed
        produce(topic, ["not json"])
        wait_for(lambda: daemon.metric("hbingest_kafka_security_errors_total", {"client": "dead_letter"}) >= 1, 30,
                 "the dead-letter producer's SASL failure counted")
        status, body = readyz(daemon)
        assert status == 503 and "Kafka TLS/SASL failing: kafka producer: SASL authentication failed" in body, body
        assert daemon.process.poll() is None, "a failure after startup must not stop the daemon"
        assert daemon.metric("hbingest_dead_letters_total", {"outcome": "delivered"}) == 0
    finally:
        set_scram_password(env("HBINGEST_KAFKA_SASL_PASSWORD"))
    # librdkafka reconnects by itself; the held letter goes through and its offset is committed.
    wait_for(lambda: daemon.metric("hbingest_dead_letters_total", {"outcome": "delivered"}) >= 1, 60,
             "the letter delivered once the password is right again")
    wait_for(lambda: daemon.metric("hbingest_committed_offset") >= 1, 30, "offset committed")
    daemon.stop()
    assert "SASL authentication failed" in daemon.log_text()


def test_gateway_requiring_a_client_certificate_gets_ours(tmp_path):
    """hbase.tls.cert_file/key_file are presented: a terminator that requires a client certificate
    lets the daemon's tools through with them and refuses them without."""
    stack = TLS_DIR()
    process, address = stunnel_in_front_of_thrift2(tmp_path, stack / "server.pem", stack / "server.key",
                                                   client_ca=stack / "ca.pem")
    try:
        table = unique("tbl")
        tls = {"enabled": True, "ca_file": str(stack / "ca.pem")}
        without, _, _, _ = tls_config(tmp_path, "without", KAFKA(), {}, table=table,
                                      hbase={"hbase.endpoints": [address], "hbase.tls": tls})
        result = run_hbingest("bootstrap", "--config", str(without), check=False, timeout=60)
        assert result.returncode != 0, result.stdout
        assert f"TLS to Thrift2 gateway {address} failed" in result.stderr, result.stderr
        with_cert, _, _, _ = tls_config(tmp_path, "with_cert", KAFKA(), {}, table=table,
                                        hbase={"hbase.endpoints": [address],
                                               "hbase.tls": {**tls, "cert_file": str(stack / "client.pem"),
                                                             "key_file": str(stack / "client.key")}})
        run_hbingest("bootstrap", "--config", str(with_cert))
    finally:
        process.terminate()
        process.wait(10)
