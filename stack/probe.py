#!/usr/bin/env python3
"""Readiness probes and a self-test for the hbstack local stack.

Used by stack/hbstack (run with <repo>/.venv/bin/python). Each probe exits 0
when the service answered, 1 otherwise, printing one reason line on stderr.

  probe.py kafka   HOST:PORT [--timeout S]   metadata request (AdminClient.list_topics)
  probe.py thrift2 HOST:PORT [--timeout S]   THBaseService.tableExists('hbase:meta'),
                                             buffered transport, binary protocol
  probe.py thrift2-tls HOST:PORT --ca FILE   the same through the TLS terminator (stunnel)
  probe.py thrift2-framed HOST:PORT          the same over framed transport
  probe.py thrift1 HOST:PORT [--timeout S]   Hbase.getTableNames via happybase
                                             (buffered transport, binary protocol)
  probe.py thrift2-tables HOST:PORT          print user tables seen through Thrift2
  probe.py registry HOST:PORT [--timeout S]  GET /apis/ccompat/v7/subjects (Apicurio's Confluent API)
  probe.py selftest                          end-to-end check against `hbstack env` addresses

The Thrift2 calls are written by hand on top of the `thrift` package's
TBinaryProtocol, so no generated code is needed. Field ids come from HBase's
hbase-thrift/src/main/resources/org/apache/hadoop/hbase/thrift2/hbase.thrift:
  struct TTableName { 1: optional binary ns, 2: required binary qualifier }
  bool tableExists(1: TTableName tableName) throws (1: TIOError io)
  list<TTableName> getTableNamesByPattern(1: optional string regex,
                                          2: required bool includeSysTables) throws (1: TIOError io)
"""

import argparse
import os
import sys
import time
import uuid


def _split(addr):
    host, _, port = addr.rpartition(":")
    return host or "127.0.0.1", int(port)


# ---------------------------------------------------------------- Kafka

def _quiet_logger():
    import logging
    log = logging.getLogger("hbstack.rdkafka")
    log.addHandler(logging.NullHandler())
    log.propagate = False
    return log


def probe_kafka(addr, timeout):
    from confluent_kafka.admin import AdminClient
    admin = AdminClient({"bootstrap.servers": addr, "socket.timeout.ms": int(timeout * 1000),
                         "logger": _quiet_logger()})
    md = admin.list_topics(timeout=timeout)
    if not md.brokers:
        raise RuntimeError("metadata response lists no brokers")
    return "%d broker(s), %d topic(s)" % (len(md.brokers), len(md.topics))


# ---------------------------------------------------------------- Thrift2 (raw)

def _t2_connect(addr, timeout, ca=None, framed=False):
    from thrift.protocol import TBinaryProtocol
    from thrift.transport import TSocket, TTransport
    host, port = _split(addr)
    if ca:  # through the stack's TLS terminator: certificate chain and host name verified
        import ssl
        from thrift.transport import TSSLSocket
        sock = TSSLSocket.TSSLSocket(host, port, ca_certs=ca, cert_reqs=ssl.CERT_REQUIRED)
    else:
        sock = TSocket.TSocket(host, port)
    sock.setTimeout(int(timeout * 1000))
    trans = TTransport.TFramedTransport(sock) if framed else TTransport.TBufferedTransport(sock)
    trans.open()
    return trans, TBinaryProtocol.TBinaryProtocol(trans)


def _read_value(proto, ttype):
    """Generic reader: structs become {field_id: value}, lists become lists."""
    from thrift.Thrift import TType
    if ttype == TType.STRUCT:
        out = {}
        proto.readStructBegin()
        while True:
            _, ftype, fid = proto.readFieldBegin()
            if ftype == TType.STOP:
                break
            out[fid] = _read_value(proto, ftype)
            proto.readFieldEnd()
        proto.readStructEnd()
        return out
    if ttype in (TType.LIST, TType.SET):
        etype, size = proto.readListBegin() if ttype == TType.LIST else proto.readSetBegin()
        vals = [_read_value(proto, etype) for _ in range(size)]
        proto.readListEnd() if ttype == TType.LIST else proto.readSetEnd()
        return vals
    if ttype == TType.STRING:
        return proto.readBinary()
    if ttype == TType.BOOL:
        return proto.readBool()
    if ttype == TType.I32:
        return proto.readI32()
    if ttype == TType.I64:
        return proto.readI64()
    proto.skip(ttype)
    return None


def _t2_call(proto, trans, method, write_args):
    from thrift.Thrift import TApplicationException, TMessageType, TType
    proto.writeMessageBegin(method, TMessageType.CALL, 1)
    proto.writeStructBegin(method + "_args")
    write_args(proto)
    proto.writeFieldStop()
    proto.writeStructEnd()
    proto.writeMessageEnd()
    trans.flush()
    _, mtype, _ = proto.readMessageBegin()
    if mtype == TMessageType.EXCEPTION:
        exc = TApplicationException()
        exc.read(proto)
        proto.readMessageEnd()
        raise RuntimeError("%s: TApplicationException %s" % (method, exc))
    result = _read_value(proto, TType.STRUCT)
    proto.readMessageEnd()
    if 1 in result:  # TIOError io
        msg = result[1].get(1, b"") if isinstance(result[1], dict) else result[1]
        raise RuntimeError("%s: TIOError %s" % (method, msg.decode("utf-8", "replace")[:300]))
    if 0 not in result:
        raise RuntimeError("%s: empty result" % method)
    return result[0]


def t2_table_exists(addr, timeout, table, ca=None, framed=False):
    from thrift.Thrift import TType
    ns, _, qual = table.rpartition(":")

    def args(p):
        p.writeFieldBegin("tableName", TType.STRUCT, 1)
        p.writeStructBegin("TTableName")
        if ns:
            p.writeFieldBegin("ns", TType.STRING, 1)
            p.writeBinary(ns.encode())
            p.writeFieldEnd()
        p.writeFieldBegin("qualifier", TType.STRING, 2)
        p.writeBinary(qual.encode())
        p.writeFieldEnd()
        p.writeFieldStop()
        p.writeStructEnd()
        p.writeFieldEnd()

    trans, proto = _t2_connect(addr, timeout, ca, framed)
    try:
        return _t2_call(proto, trans, "tableExists", args)
    finally:
        trans.close()


def t2_table_names(addr, timeout, include_sys=False):
    from thrift.Thrift import TType

    def args(p):
        p.writeFieldBegin("includeSysTables", TType.BOOL, 2)
        p.writeBool(include_sys)
        p.writeFieldEnd()

    trans, proto = _t2_connect(addr, timeout)
    try:
        names = _t2_call(proto, trans, "getTableNamesByPattern", args)
    finally:
        trans.close()
    out = []
    for tn in names:
        ns = tn.get(1, b"").decode()
        q = tn.get(2, b"").decode()
        out.append(q if ns in ("", "default") else "%s:%s" % (ns, q))
    return out


def probe_thrift2(addr, timeout, ca=None):
    if not t2_table_exists(addr, timeout, "hbase:meta", ca):
        raise RuntimeError("tableExists(hbase:meta) returned false")
    return "tableExists(hbase:meta) = true"


def probe_thrift2_framed(addr, timeout):
    if not t2_table_exists(addr, timeout, "hbase:meta", framed=True):
        raise RuntimeError("tableExists(hbase:meta) returned false")
    return "tableExists(hbase:meta) = true over framed transport"


def probe_thrift2_tls(addr, timeout, ca):
    if not ca:
        raise RuntimeError("--ca FILE required")
    return probe_thrift2(addr, timeout, ca) + " over TLS"


# ---------------------------------------------------------------- Thrift1 (happybase)

def probe_thrift1(addr, timeout):
    import happybase
    host, port = _split(addr)
    conn = happybase.Connection(host, port, timeout=int(timeout * 1000), autoconnect=False)
    conn.open()
    try:
        tables = conn.tables()
    finally:
        conn.close()
    return "getTableNames -> %d table(s)" % len(tables)


# ---------------------------------------------------------------- schema registry

REGISTRY_API = "/apis/ccompat/v7"


def probe_registry(addr, timeout):
    import json
    import urllib.request
    with urllib.request.urlopen("http://%s%s/subjects" % (addr, REGISTRY_API), timeout=timeout) as r:
        subjects = json.load(r)
    if not isinstance(subjects, list):
        raise RuntimeError("GET /subjects answered %r, not a list" % (subjects,))
    return "subjects -> %d subject(s)" % len(subjects)


def registry_roundtrip(base, tag):
    """Registers an Avro schema under a fresh subject and reads it back by id."""
    import json
    import urllib.request
    schema = json.dumps({"type": "record", "name": "Selftest%s" % tag,
                         "fields": [{"name": "a", "type": "string"}]})
    req = urllib.request.Request("%s/subjects/hbstack-selftest-%s-value/versions" % (base, tag),
                                 data=json.dumps({"schema": schema}).encode(), method="POST",
                                 headers={"Content-Type": "application/vnd.schemaregistry.v1+json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        sid = json.load(r)["id"]
    with urllib.request.urlopen("%s/schemas/ids/%d" % (base, sid), timeout=10) as r:
        got = json.load(r)
    assert json.loads(got["schema"]) == json.loads(schema), got
    return sid


# ---------------------------------------------------------------- self-test

def selftest(args):
    """End-to-end: HBase via Thrift1 and Thrift2, Kafka produce/consume incl. a 5 MB message."""
    import happybase
    from confluent_kafka import Consumer, Producer

    kafka = os.environ.get("HBINGEST_KAFKA_BOOTSTRAP", "127.0.0.1:19092")
    t1 = os.environ.get("HBINGEST_THRIFT1", "127.0.0.1:19091")
    t2 = os.environ.get("HBINGEST_THRIFT2", "127.0.0.1:19090")
    tag = uuid.uuid4().hex[:8]
    table = "hbstack_selftest_" + tag

    host, port = _split(t1)
    conn = happybase.Connection(host, port, timeout=30000)
    conn.create_table(table, {"cf": dict(max_versions=1)})
    tbl = conn.table(table)
    tbl.put(b"row1", {b"cf:q": b"value-" + tag.encode()})
    got = tbl.row(b"row1")
    assert got == {b"cf:q": b"value-" + tag.encode()}, got
    print("thrift1: created %s, put/get ok" % table)

    names = t2_table_names(t2, 10.0)
    assert table in names, names
    assert t2_table_exists(t2, 10.0, table)
    print("thrift2: tableExists ok, tables = %s" % names)

    topic = "hbstack-selftest-" + tag
    big = os.urandom(5 * 1024 * 1024)
    # Idempotence keeps the two messages in order even when the first send to the freshly
    # auto-created topic is retried.
    p = Producer({"bootstrap.servers": kafka, "message.max.bytes": 10 * 1024 * 1024,
                  "enable.idempotence": True, "logger": _quiet_logger()})
    errs = []
    p.produce(topic, key=b"k1", value=b"hello", on_delivery=lambda e, m: e and errs.append(e))
    p.produce(topic, key=b"k1", value=big, on_delivery=lambda e, m: e and errs.append(e))
    left = p.flush(30)
    assert left == 0 and not errs, (left, errs)
    c = Consumer({"bootstrap.servers": kafka, "group.id": "hbstack-selftest-" + tag,
                  "auto.offset.reset": "earliest", "fetch.max.bytes": 64 * 1024 * 1024,
                  "max.partition.fetch.bytes": 16 * 1024 * 1024, "logger": _quiet_logger()})
    c.subscribe([topic])
    seen = []
    deadline = time.time() + 60
    while len(seen) < 2 and time.time() < deadline:
        m = c.poll(1.0)
        if m is None:
            continue
        assert not m.error(), m.error()
        seen.append(m.value())
    c.commit(asynchronous=False)
    c.close()
    assert seen == [b"hello", big], [len(v) for v in seen]
    print("kafka: produced+consumed 2 messages (incl. 5 MiB) on %s" % topic)

    registry = os.environ.get("HBINGEST_SCHEMA_REGISTRY")
    if registry:
        print("registry: registered and read back schema id %d" % registry_roundtrip(registry, tag))

    conn.delete_table(table, disable=True)
    conn.close()
    print("selftest: ok")


# ---------------------------------------------------------------- main

PROBES = {"kafka": probe_kafka, "thrift2": probe_thrift2, "thrift2-framed": probe_thrift2_framed,
          "thrift1": probe_thrift1, "registry": probe_registry,
          "thrift2-tls": lambda addr, timeout, ca: probe_thrift2_tls(addr, timeout, ca)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("what", choices=sorted(PROBES) + ["thrift2-tables", "selftest"])
    ap.add_argument("addr", nargs="?")
    ap.add_argument("--timeout", type=float, default=5.0)
    ap.add_argument("--ca", help="CA file (thrift2-tls)")
    args = ap.parse_args()
    if args.what == "selftest":
        selftest(args)
        return 0
    if not args.addr:
        ap.error("address HOST:PORT required")
    try:
        if args.what == "thrift2-tables":
            print("\n".join(t2_table_names(args.addr, args.timeout)))
            return 0
        extra = (args.ca,) if args.what == "thrift2-tls" else ()
        print("%s %s: %s" % (args.what, args.addr, PROBES[args.what](args.addr, args.timeout, *extra)))
        return 0
    except Exception as e:  # one line: the caller polls and shows the last reason
        msg = str(e).strip().splitlines()[0] if str(e).strip() else ""
        print("%s %s: %s %s" % (args.what, args.addr, type(e).__name__, msg[:300]), file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
