"""Rows the user designs (issue 24) end to end on the real stack: typed cells in two families from
value paths, a header and the Kafka key, for JSON, Avro and Protobuf values written by confluent-kafka's
own serializers (schema_peers.py); a Java reader (`stack/hbstack cells`, Bytes.toX) and /v1/events
read them back. Packed rows (the value in one cell) read back as the field layout. Table templates
with an allow-list; tombstones as deletes across a rebalance; upserts out of order.

Cheap on purpose: one daemon run per scenario, a few pointed events, one Java reader call per table.
"""

import base64
import decimal
import functools
import json

import schema_peers
from confluent_kafka import Consumer, Producer, TopicPartition
from confluent_kafka.serialization import MessageField, SerializationContext
from support import KAFKA, Daemon, consume_all, count_rows, create_topic, group_committed, hbase, java_cells, now_ms, \
    query_events, run_hbingest, scan_all, unique, wait_for

FORMATS = ("json", "avro", "protobuf")


def produce_records(topic, records):
    """records: dicts with value (bytes/str or None: a tombstone), and optional key, headers,
    partition, timestamp. Delivered in order, one at a time per partition (idempotent producer)."""
    producer = Producer({"bootstrap.servers": KAFKA(), "acks": "all", "enable.idempotence": True, "linger.ms": 5})
    failures = []

    def on_delivery(err, _msg):
        if err is not None:
            failures.append(err)

    for record in records:
        kwargs = {k: record[k] for k in ("key", "headers", "partition", "timestamp") if k in record}
        producer.produce(topic, record["value"], on_delivery=on_delivery, **kwargs)
        producer.poll(0)
    assert producer.flush(60) == 0 and not failures, failures


def dlq_size(dlq):
    consumer = Consumer({"bootstrap.servers": KAFKA(), "group.id": unique("reader")})
    try:
        low, high = consumer.get_watermark_offsets(TopicPartition(dlq, 0), timeout=10)
        return high - low
    finally:
        consumer.close()


def letters_by_reason(dlq, expected):
    letters = consume_all(dlq, expected, timeout=60)
    out = []
    for letter in letters:
        headers = {k: v.decode(errors="replace") for k, v in letter.headers()}
        out.append((headers["__connect.errors.exception.class.name"], headers["__connect.errors.exception.message"],
                    letter.value()))
    return out


# ---- 1. typed cells in two families, header and key inputs, three value formats ------------------

AVRO_PAY = {
    "type": "record", "name": "Pay", "namespace": "hbingest.rows",
    "fields": [
        {"name": "event_id", "type": "string"},
        {"name": "ts", "type": "long"},
        {"name": "amount", "type": "long"},
        {"name": "qty", "type": "int"},
        {"name": "price", "type": "double"},
        {"name": "paid", "type": "boolean"},
        {"name": "note", "type": ["null", "string"], "default": None},
        # Avro's decimal logical type keeps the scale (docs/rows.md): -12.30 stays scale 2.
        {"name": "total", "type": {"type": "bytes", "logicalType": "decimal", "precision": 20, "scale": 2}},
        {"name": "blob", "type": "bytes"},
        {"name": "payment", "type": {"type": "record", "name": "Payment", "fields": [
            {"name": "currency", "type": "string"}, {"name": "fee", "type": "double"}]}},
    ]}

PAY_PROTO = """syntax = "proto3";
package hbingest.rows;
message Payment { string currency = 1; double fee = 2; }
message Pay {
  string event_id = 1;
  int64 ts = 2;
  int64 amount = 3;
  int32 qty = 4;
  double price = 5;
  bool paid = 6;
  optional string note = 7;
  string total = 8;
  bytes blob = 9;
  Payment payment = 10;
  optional uint64 big = 11;
}
"""

# Per cell: the type the route writes it with (the Java reader's type map is the same).
PAY_TYPES = {"d:ts": "long", "d:amount": "long", "d:qty": "int", "p:price": "double", "d:paid": "boolean",
             "d:note": "string", "p:total": "bigdecimal", "d:blob": "bytes", "p:cur": "string", "p:fee": "text",
             "d:trace": "string", "d:k": "string", "d:big": "long", "d:kraw": "bytes", "d:kts": "long"}


def pay_columns():
    return [
        {"from": "ts", "to": "d:ts", "type": "long"},
        {"from": "amount", "to": "d:amount", "type": "long"},
        {"from": "qty", "to": "d:qty", "type": "int"},
        {"from": "price", "to": "p:price", "type": "double"},
        {"from": "paid", "to": "d:paid", "type": "boolean"},
        {"from": "note", "to": "d:note", "type": "string"},
        {"from": "total", "to": "p:total", "type": "bigdecimal"},
        {"from": "blob", "to": "d:blob", "type": "bytes"},
        {"from": "payment.currency", "to": "p:cur", "type": "string"},
        # A nested record to a family, one cell per member, minus the one mapped above.
        {"from": "payment", "to": "p:*", "type": "text", "exclude": ["currency"]},
        {"from": "header:trace-id", "to": "d:trace", "type": "string"},
        {"from": "key", "to": "d:k", "type": "string"},
        {"from": "big", "to": "d:big", "type": "long"},  # Protobuf's uint64, only where set
        {"from": "kafka:key", "to": "d:kraw", "type": "bytes"},
        {"from": "kafka:timestamp", "to": "d:kts", "type": "long"},
    ]


def pay_events(base):
    """Two events: every type at an edge (a long above 2^53, Integer.MIN_VALUE, 0.1, a scale-2
    decimal, non-UTF-8 bytes, text beyond the BMP), then zeros, false and a null note (proto3 does
    not even send those: they must still be cells, equal to JSON's)."""
    return [
        {"event_id": None, "ts": base, "amount": 2 ** 53 + 1, "qty": -2 ** 31, "price": 0.1, "paid": True,
         "note": "caf\u00e9 \U0001F600", "total": "-12.30", "blob": b"\x00\xff\x01raw",
         "payment": {"currency": "EUR", "fee": 0.5}, "key": "k\u00e9-1", "trace": "tr\u00e9-1"},
        {"event_id": None, "ts": base + 1, "amount": -(2 ** 63), "qty": 0, "price": -2.5e-300, "paid": False,
         "note": None, "total": "0.00", "blob": b"", "payment": {"currency": "", "fee": 0.0},
         "key": "k-2", "trace": ""},
        # No header at all: no trace cell (null_fields: skip), the rest as usual.
        {"event_id": None, "ts": base + 2, "amount": 7, "qty": 7, "price": 7.0, "paid": True, "note": "n",
         "total": "7.00", "blob": b"7", "payment": {"currency": "USD", "fee": 0.5}, "key": "k-3", "trace": None},
    ]


def json_value(e, event_type):
    value = {k: e[k] for k in ("ts", "amount", "qty", "price", "paid", "note", "total", "payment")}
    value["event_id"] = event_type
    value["blob"] = e["blob"].decode("latin-1")  # JSON has no bytes: a string's UTF-8 bytes are written
    return json.dumps(value).encode()


def expected_cells(e, fmt):
    """The cell values the Java reader must read (Bytes.toX, by PAY_TYPES)."""
    blob = e["blob"] if fmt != "json" else e["blob"].decode("latin-1").encode()
    cells = {"d:ts": e["ts"], "d:amount": e["amount"], "d:qty": e["qty"], "p:price": e["price"],
             "d:paid": e["paid"], "p:total": e["total"], "d:blob": base64.b64encode(blob).decode(),
             "p:cur": e["payment"]["currency"], "p:fee": "0.5" if e["payment"]["fee"] else "0.0",
             "d:trace": e["trace"], "d:k": e["key"], "d:kraw": base64.b64encode(e["key"].encode()).decode(),
             "d:kts": e["ts"] + 7}
    if e["trace"] is None:
        del cells["d:trace"]
    if e["note"] is not None:
        cells["d:note"] = e["note"]
    return cells


@functools.cache
def pay_serializers():
    """confluent-kafka's Avro serializer, the Protobuf module and its serializer for the Pay events
    (once per process: Protobuf's descriptor pool takes a message name once)."""
    registry = schema_peers.client()
    avro = schema_peers.avro_serializer(json.dumps(AVRO_PAY), registry)
    module = schema_peers.protobuf_module(PAY_PROTO, "rows_pay_" + unique("m")[-8:])
    return avro, module, schema_peers.protobuf_serializer(module.Pay, registry)


def pay_value(fmt, e, event_type, topic, serializers):
    """A pay_events() event as the message value of `fmt`, through the registry for Avro and Protobuf."""
    avro, module, proto = serializers
    if fmt == "json":
        return json_value(e, event_type)
    if fmt == "avro":
        fields = {k: e[k] for k in ("ts", "amount", "qty", "price", "paid", "note", "blob", "payment")}
        return avro({**fields, "event_id": event_type, "total": decimal.Decimal(e["total"])},
                    SerializationContext(topic, MessageField.VALUE))
    msg = module.Pay(event_id=event_type, ts=e["ts"], amount=e["amount"], qty=e["qty"], price=e["price"],
                     paid=e["paid"], total=e["total"], blob=e["blob"])
    msg.payment.currency = e["payment"]["currency"]
    msg.payment.fee = e["payment"]["fee"]
    if e["note"] is not None:
        msg.note = e["note"]
    return proto(msg, SerializationContext(topic, MessageField.VALUE))


# event type | time | Kafka key: the row key of a pay event (`\x01` pads a short component).
PAY_KEY = {"components": [
    {"name": "event", "type": "field", "field": "event_id", "width": 12},
    {"name": "time", "type": "time", "field": "ts", "format": "binary"},
    {"name": "k", "type": "field", "field": "key", "width": 8}]}


def pay_row_key(event_type, ts, key):
    return event_type.encode().ljust(12, b"\x01") + ts.to_bytes(8, "big") + key.encode().ljust(8, b"\x01")


def test_typed_cells_from_values_headers_and_keys_read_by_java_and_the_query_api(daemon_factory, tmp_path):
    tag = unique("rows")
    topics = {fmt: f"{tag}_{fmt}" for fmt in FORMATS}
    table, dlq = tag + "_pay", tag + "_dlq"
    for topic in topics.values():
        create_topic(topic, partitions=2)
    create_topic(dlq, partitions=1)
    avro, module, proto = pay_serializers()

    base = now_ms() - 5000
    events = pay_events(base)
    for fmt in FORMATS:
        event_type = "pay_" + fmt
        records = []
        for i, e in enumerate(events):
            value = pay_value(fmt, e, event_type, topics[fmt], (avro, module, proto))
            # Two trace-id headers: the last one counts.
            headers = [] if e["trace"] is None else [("trace-id", b"overwritten"), ("trace-id", e["trace"].encode())]
            records.append({"value": value, "key": e["key"].encode(), "partition": i % 2, "headers": headers,
                            "timestamp": e["ts"] + 7})
        produce_records(topics[fmt], records)
    # Values their column's type refuses: numbers sent as text are not converted, nothing is rounded
    # or wrapped. Each is a dead letter naming the column.
    refused = [("d:amount", {"amount": "42"}), ("d:qty", {"qty": 2 ** 31}), ("p:price", {"price": "0.1"}),
               ("d:paid", {"paid": "true"}), ("p:total", {"total": "12.3.4"}), ("d:amount", {"amount": 2.5}),
               ("d:k", {"key": b"\xc3("})]  # a Kafka key of invalid UTF-8 for a string column
    produce_records(topics["json"], [{"value": json_value({**events[0], **change}, "pay_json"),
                                      "key": change.get("key", b"bad")} for _, change in refused])
    # A uint64 above Long.MAX_VALUE is out of range for long, not wrapped to a negative number.
    too_big = module.Pay(event_id="pay_protobuf", ts=base, amount=1, total="1", big=2 ** 64 - 1)
    produce_records(topics["protobuf"], [{"value": proto(too_big, SerializationContext(topics["protobuf"],
                                                                                         MessageField.VALUE)),
                                          "key": b"big"}])
    refused.append(("d:big", {}))
    # One in range but above 2^53: exact (a uint64 read through a double would lose the last bit).
    exact = module.Pay(event_id="pay_protobuf", ts=base + 100, amount=1, total="1", big=2 ** 53 + 1)
    produce_records(topics["protobuf"], [{"value": proto(exact, SerializationContext(topics["protobuf"],
                                                                                      MessageField.VALUE)),
                                          "key": b"exact"}])

    group = unique("group")
    daemon = daemon_factory(topics["json"], table, group=group, **{
        "kafka.topics": list(topics.values()),
        "dlq.topic": dlq,
        "schema_registry.url": schema_peers.registry_url(),
        "routes": [{"event_types": ["pay_" + fmt], "topics": [topics[fmt]], "format": fmt, "table": table,
                    "key": PAY_KEY, "columns": pay_columns()} for fmt in FORMATS],
    }).start()
    total = len(FORMATS) * len(events)
    letters = letters_by_reason(dlq, len(refused))
    wait_for(lambda: sum(group_committed(group, t) for t in topics.values()) >= total + len(refused) + 1, 60,
             "every event committed")
    assert daemon.metric("hbingest_events_invalid_total") == len(refused), daemon.log_text()[-3000:]
    assert [reason for reason, _, _ in letters] == ["hbingest.decode.bad_value"] * len(refused), letters
    named = sorted(message.split(" ")[1] for _, message, _ in letters)  # "column d:qty (from qty): ..."
    assert named == sorted(column for column, _ in refused), letters
    # Above int64 a number reads as a double (docs/formats.md), so 2^64-1 is named as 2^64.
    assert [m for _, m, _ in letters if m.startswith("column d:big ")] == \
        ["column d:big (from big): 18446744073709551616 is out of range for type long"], letters

    # Both families of the mapping, made with the table's TTL.
    connection = hbase()
    try:
        families = connection.table(table).families()
    finally:
        connection.close()
    assert {name: f["time_to_live"] for name, f in families.items()} == {b"d": 600, b"p": 600}

    # The Java reader, once for the table: every cell of every format is the event's value.
    cells = java_cells(table, [f"{column}={kind}" for column, kind in PAY_TYPES.items()])
    rows = {}
    for cell in cells:
        assert "error" not in cell, cell
        rows.setdefault(bytes.fromhex(cell["row"]), {})[cell["family"] + ":" + cell["qualifier"]] = cell["value"]
    exact_key = pay_row_key("pay_protobuf", base + 100, "exact")
    assert rows.pop(exact_key, {}).get("d:big") == 2 ** 53 + 1, "uint64 9007199254740993 into a long column"
    assert len(rows) == total, sorted(rows)
    for fmt in FORMATS:
        for e in events:
            key = pay_row_key("pay_" + fmt, e["ts"], e["key"])
            assert key in rows, (fmt, key, sorted(rows))
            assert rows[key] == expected_cells(e, fmt), (fmt, e["key"])

    # The query API answers typed JSON (a long as a number), the same whatever the format.
    answers = {}
    for fmt in FORMATS:
        status, body = query_events(daemon, event_id="pay_" + fmt, **{"from": base, "to": base + 10})
        assert status == 200, body
        answers[fmt] = [row["columns"] for row in body["rows"]]
        assert len(answers[fmt]) == len(events), body
        first = answers[fmt][0]
        assert first["d:amount"] == 2 ** 53 + 1 and isinstance(first["d:amount"], int)
        assert first["d:qty"] == -2 ** 31 and first["d:paid"] is True and first["p:price"] == 0.1
        assert first["p:total"] == "-12.30" and first["d:note"] == "caf\u00e9 \U0001F600"
        assert first["d:trace"] == "tr\u00e9-1" and first["d:k"] == "k\u00e9-1" and first["d:kts"] == base + 7
        assert base64.b64decode(first["d:kraw"]) == "k\u00e9-1".encode()
        second = answers[fmt][1]
        assert (second["d:amount"], second["d:qty"], second["d:paid"]) == (-(2 ** 63), 0, False)
        assert "d:note" not in second and second["d:trace"] == "" and "d:trace" not in answers[fmt][2]
    # Columns asked for by name, in either family (a bare qualifier is in the first family, d).
    status, body = query_events(daemon, event_id="pay_avro", columns="p:price,d:amount,trace",
                                **{"from": base, "to": base + 10})
    assert status == 200, body
    assert [row["columns"] for row in body["rows"]] == \
        [{"p:price": c["p:price"], "d:amount": c["d:amount"], **({"d:trace": c["d:trace"]} if "d:trace" in c else {})}
         for c in answers["avro"]], body
    protobuf_answer = [dict(c) for c in answers["protobuf"]]
    for fmt in ("avro", "protobuf"):
        assert [base64.b64decode(c.pop("d:blob")) for c in answers[fmt]] == [e["blob"] for e in events]
    answers["json"] = [{k: v for k, v in c.items() if k != "d:blob"} for c in answers["json"]]
    assert answers["avro"] == answers["json"] and answers["protobuf"] == answers["json"]
    daemon.stop()

    # The read-only `serve` and the CLI read by the same route model: the same typed answer.
    reader = Daemon(daemon.config_path, daemon.config, tmp_path / "serve.log", command="serve").start()
    try:
        status, body = query_events(reader, event_id="pay_protobuf", **{"from": base, "to": base + 10})
    finally:
        reader.stop()
    assert status == 200 and [row["columns"] for row in body["rows"]] == protobuf_answer, body
    out = run_hbingest("query", "--config", daemon.config_path, "--event-id", "pay_protobuf", "--from", str(base),
                       "--to", str(base + 10), "--format", "ndjson").stdout
    assert [json.loads(line)["columns"] for line in out.splitlines() if line.strip()] == protobuf_answer, out


# ---- 1b. packed rows: the whole value in one cell, read back as the field layout ---------------

def test_a_packed_row_is_one_cell_and_reads_back_as_the_field_layout_in_every_format(daemon_factory):
    """Each format's topic carries the pay events twice, as event type pk_FMT (a route packing the
    value into d:raw, table TAG_packed) and fl_FMT (the default field layout, table TAG_fields):
    the packed table holds the message values as received, one cell per event, and /v1/events
    decodes each through the registry into the field layout's answer."""
    tag = unique("packed")
    topics = {fmt: f"{tag}_{fmt}" for fmt in FORMATS}
    packed, fields, dlq = tag + "_packed", tag + "_fields", tag + "_dlq"
    for topic in [*topics.values(), dlq]:
        create_topic(topic, partitions=1)
    serializers = pay_serializers()
    base = now_ms() - 5000
    events = pay_events(base)
    stored = {}  # the packed table as it must be: row key -> {column: value as received}
    for fmt in FORMATS:
        records = []
        for layout in ("pk", "fl"):
            for e in events:
                value = pay_value(fmt, e, f"{layout}_{fmt}", topics[fmt], serializers)
                records.append({"value": value, "key": e["key"].encode(), "timestamp": e["ts"] + 7})
                if layout == "pk":
                    stored[pay_row_key(f"pk_{fmt}", e["ts"], e["key"])] = {b"d:raw": value}
        produce_records(topics[fmt], records)

    group = unique("group")
    routes = []
    for fmt in FORMATS:
        common = {"topics": [topics[fmt]], "format": fmt, "key": PAY_KEY}
        routes.append({"event_types": [f"pk_{fmt}"], "table": packed, **common,
                       "columns": [{"from": "kafka:value", "to": "d:raw", "type": "bytes"}]})
        routes.append({"event_types": [f"fl_{fmt}"], "table": fields, **common})
    daemon = daemon_factory(topics["json"], packed, group=group, **{
        "kafka.topics": list(topics.values()), "dlq.topic": dlq,
        "schema_registry.url": schema_peers.registry_url(), "routes": routes}).start()
    wait_for(lambda: sum(group_committed(group, t) for t in topics.values()) >= 2 * len(FORMATS) * len(events), 60,
             "every event committed")
    assert dlq_size(dlq) == 0, daemon.log_text()[-3000:]
    assert dict(scan_all(packed)) == stored
    assert count_rows(fields) == len(FORMATS) * len(events)

    # A packed cell that does not decode (each format's first value cut short by its last byte),
    # stored by hand: answered as stored, with the reason.
    broken = {fmt: stored[pay_row_key(f"pk_{fmt}", base, events[0]["key"])][b"d:raw"][:-1] for fmt in FORMATS}
    connection = hbase()
    try:
        for fmt, value in broken.items():
            connection.table(packed).put(pay_row_key(f"pk_{fmt}", base + 3, "cut"), {b"d:raw": value})
    finally:
        connection.close()

    for fmt in FORMATS:
        answers = {}
        for layout in ("pk", "fl"):
            status, body = query_events(daemon, event_id=f"{layout}_{fmt}", **{"from": base, "to": base + 10})
            assert status == 200, body
            answers[layout] = body["rows"]
        *decoded, cut = answers["pk"]
        assert cut["columns"] == {"d:raw": base64.b64encode(broken[fmt]).decode()}, (fmt, cut)
        assert cut.get("packed_error"), (fmt, cut)
        assert [row["key"] for row in decoded] == \
            [pay_row_key(f"pk_{fmt}", e["ts"], e["key"]).hex() for e in events], (fmt, answers["pk"])
        assert all("packed_error" not in row for row in decoded), (fmt, decoded)
        # The same columns but the event type each was sent as.
        packed_columns = [{**row["columns"], "d:event_id": "?"} for row in decoded]
        field_columns = [{**row["columns"], "d:event_id": "?"} for row in answers["fl"]]
        assert [row["columns"]["d:event_id"] for row in decoded + answers["fl"]] == \
            [f"pk_{fmt}"] * len(events) + [f"fl_{fmt}"] * len(events), (fmt, answers)
        assert field_columns[0]["d:amount"] == str(2 ** 53 + 1), (fmt, field_columns)
        assert packed_columns == field_columns, fmt


# ---- 2. table templates with an allow-list ------------------------------------------------------

def test_a_table_template_writes_its_allowed_tables_and_dead_letters_the_rest(daemon_factory):
    tag = unique("tpl")
    topic, dlq = tag, tag + "_dlq"
    create_topic(topic, partitions=1)
    create_topic(dlq, partitions=1)
    regions = ["eu", "us", "ap"]
    base = now_ms() - 5000
    good = [{"event_id": "order", "ts": base + i, "region": regions[i % 3], "n": i} for i in range(6)]
    # A producer probing names: not listed, another case, a path, a separator, NUL, a number, none.
    hostile = ["xx", "EU", "../eu", "eu:x", "eu\u0000", 5, None, "e" * 300]
    bad = [{"event_id": "order", "ts": base, "region": r} for r in hostile]
    bad[-2].pop("region")
    produce_records(topic, [{"value": json.dumps(e)} for e in good[:3] + bad + good[3:]])

    group = unique("group")
    daemon = daemon_factory(topic, tag, group=group, **{
        "dlq.topic": dlq,
        "table.create_table": False,
        "routes": [{"event_types": ["order"], "table": tag + "_${field:region}", "preset": "events",
                    "preset_params": {"buckets": "4"}, "table_values": {"field:region": regions},
                    "max_tables": 3}],
    })
    # bootstrap makes every table the allowed values can make; `run` then finds them all.
    made = run_hbingest("bootstrap", "--config", daemon.config_path).stdout
    assert all(f"created default:{tag}_{region}" in made for region in regions), made
    daemon.start()
    letters = letters_by_reason(dlq, len(bad))
    wait_for(lambda: group_committed(group, topic) >= len(good) + len(bad), 60, "every event committed")
    daemon.stop()

    assert [reason for reason, _, _ in letters] == ["hbingest.route.table_not_allowed"] * len(bad), letters
    assert sorted((json.loads(value).get("region") for _, _, value in letters), key=str) == \
        sorted(hostile, key=str), letters
    for region in regions:
        assert count_rows(f"{tag}_{region}") == 2, region
    assert sorted(tables_named(tag)) == sorted(f"{tag}_{r}" for r in regions), "no table for a refused value"
    eu = scan_all(f"{tag}_eu")
    assert sorted(int(cells[b"d:n"]) for _, cells in eu) == [0, 3]


def tables_named(prefix):
    connection = hbase()
    try:
        return [t.decode() for t in connection.tables() if t.decode().startswith(prefix)]
    finally:
        connection.close()


def test_a_pattern_template_makes_its_tables_as_values_appear_up_to_max_tables(daemon_factory):
    """Values allowed by a pattern cannot be created up front: table.create_table must create each
    table when its first event comes, and refuse the value that would make one table more."""
    tag = unique("pat")
    topic, dlq = tag, tag + "_dlq"
    create_topic(topic, partitions=1)
    create_topic(dlq, partitions=1)
    base = now_ms() - 5000
    visits = [{"event_id": "visit", "ts": base + i, "site": s} for i, s in enumerate(["aa", "bb", "aa", "cc"])]
    produce_records(topic, [{"value": json.dumps(e)} for e in visits])
    group = unique("group")
    daemon = daemon_factory(topic, tag, group=group, **{
        "dlq.topic": dlq,
        "routes": [{"event_types": ["visit"], "table": tag + "_${field:site}", "preset": "events",
                    "preset_params": {"buckets": "4"}, "table_values": {"field:site": {"pattern": "[a-z]{2}"}},
                    "max_tables": 2}],
    }).start()
    letters = letters_by_reason(dlq, 1)
    # DEFECT (issue 24): no table is made at run time (ingest::PipelineOptions::on_new_table is never
    # set in `run`, and the table watch knows only the enumerable tables): the writes into
    # TAG_aa and TAG_bb retry for ever, holding every writer, and nothing more is stored or committed.
    try:
        wait_for(lambda: group_committed(group, topic) >= len(visits), 30, "the pattern template's events committed")
    except AssertionError as e:
        raise AssertionError(f"{e}: {daemon.diagnosis()}") from None
    daemon.stop()
    assert [reason for reason, _, _ in letters] == ["hbingest.route.table_not_allowed"], letters
    assert json.loads(letters[0][2])["site"] == "cc"
    assert sorted(tables_named(tag)) == [tag + "_aa", tag + "_bb"]
    assert (count_rows(tag + "_aa"), count_rows(tag + "_bb")) == (2, 1)


# ---- 3. tombstones as deletes across a rebalance; upserts out of order --------------------------

AVRO_KEY = {"type": "record", "name": "OrderKey", "namespace": "hbingest.rows",
            "fields": [{"name": "order_id", "type": "long"}]}


def test_tombstones_delete_rows_across_a_rebalance_and_upserts_keep_the_newest(daemon_factory):
    tag = unique("tomb")
    topic, table, dlq = tag, tag + "_status", tag + "_dlq"
    create_topic(topic, partitions=2)
    create_topic(dlq, partitions=1)
    key_of = schema_peers.avro_serializer(json.dumps(AVRO_KEY))
    base = now_ms() - 60_000
    clock = [base]

    def record(order_id, status, partition, ts=None, **note):
        """A put (status given) or a tombstone (None), Kafka timestamp = event time, increasing."""
        if ts is None:
            clock[0] += 10
            ts = clock[0]
        value = None if status is None else json.dumps(
            {"event_id": "order_status", "ts": ts, "status": status, "amount": order_id * 100, **note}).encode()
        return {"value": value, "key": key_of({"order_id": order_id}, SerializationContext(topic, MessageField.KEY)),
                "partition": partition, "timestamp": ts}

    orders = range(1, 7)  # order n lives on partition n % 2
    phase1 = [r for n in orders for r in (record(n, "created", n % 2), record(n, None, n % 2))]
    phase2 = [record(n, "paid", n % 2) for n in orders]
    # Orders 1-3 are deleted again; 4-6 end with their "paid" put.
    phase3 = [record(n, None, n % 2) for n in (1, 2, 3)]
    # Order 7: the newer event first, the older one after it, on the other partition (the other
    # daemon writes it): the newest's cells stay.
    phase3 += [record(7, "shipped", 0, ts=base + 50_000), record(7, "created", 1, ts=base + 40_000)]
    # null_fields: delete_cell. Order 11: a later null deletes the note. Order 12: an older event's
    # null, arriving last (the other daemon), deletes nothing newer.
    phase3 += [record(11, "created", 1, note="x"), record(11, "paid", 1, note=None),
               record(12, "shipped", 0, ts=base + 50_000, note="keep"),
               record(12, "created", 1, ts=base + 45_000, note=None)]

    key_spec = {"components": [{"name": "order", "type": "int", "field": "key.order_id", "width": 12}]}
    group = unique("group")
    overrides = {
        "dlq.topic": dlq,
        "schema_registry.url": schema_peers.registry_url(),
        "decode.topic_key_formats": {topic: "avro"},
        "routes": [{"event_types": ["order_status"], "topics": [topic], "table": table, "key": key_spec,
                    "on_tombstone": "delete", "null_fields": "delete_cell",
                    "columns": [{"from": "status", "to": "d:status", "type": "string"},
                                {"from": "note", "to": "d:note", "type": "string"},
                                {"from": "amount", "to": "d:amount", "type": "long"},
                                {"from": "key.order_id", "to": "k:order_id", "type": "long"},
                                {"from": "kafka:partition", "to": "k:partition", "type": "int"}]}],
    }

    def committed(count):
        wait_for(lambda: group_committed(group, topic) >= count, 60, f"{count} records committed")

    # Rebalances while events are in flight: a second member joins as the first works through
    # phases 1 and 2, and the first leaves as phase 3 arrives.
    produce_records(topic, phase1 + phase2)
    first = daemon_factory(topic, table, group=group, name="first", **overrides).start()
    second = daemon_factory(topic, table, group=group, name="second", **overrides).start()
    wait_for(lambda: "partitions assigned: 1" in second.log_text() and
             first.log_text().count("partitions assigned") >= 2, 60, "the group rebalanced to two members")
    committed(len(phase1) + len(phase2))
    produce_records(topic, phase3)
    first.stop()
    wait_for(lambda: "partitions assigned: 2" in second.log_text(), 60, "the second daemon holding both partitions")
    committed(len(phase1) + len(phase2) + len(phase3))

    # Order 8: put, delete, put at once (likely one batch): the last put stays. Order 9: put, delete at
    # once: gone. Order 10: a tombstone stamped before the put it follows deletes nothing newer.
    phase4 = [record(8, "created", 0), record(8, None, 0), record(8, "paid", 0),
              record(9, "created", 1), record(9, None, 1),
              record(10, "paid", 0, ts=base + 30_000), record(10, None, 0, ts=base + 20_000),
              # Order 13: a column's put, delete (a null), put at once: the last note stays.
              record(13, "created", 1, note="a"), record(13, "paid", 1, note=None), record(13, "paid", 1, note="b")]
    # Tombstones whose key cannot make a row key: dead letters, not deletes of some other row.
    phase4 += [{"value": None, "key": b"\x00\x00\x00\x00\x01garbage", "partition": 1, "timestamp": clock[0]},
               {"value": None, "partition": 1, "timestamp": clock[0]}]
    produce_records(topic, phase4)
    committed(len(phase1) + len(phase2) + len(phase3) + len(phase4))
    letters = letters_by_reason(dlq, 2)
    second.stop()
    assert dlq_size(dlq) == 2, "no other dead letter"

    cells = java_cells(table, ["d:status=string", "d:note=string", "d:amount=long", "k:order_id=long",
                               "k:partition=int"])
    rows = {}
    for cell in cells:
        assert "error" not in cell, cell
        rows.setdefault(int(bytes.fromhex(cell["row"])), {})[cell["family"] + ":" + cell["qualifier"]] = cell["value"]
    expected = {n: {"d:status": "paid", "d:amount": n * 100, "k:order_id": n, "k:partition": n % 2}
                for n in (4, 5, 6)}
    expected[7] = {"d:status": "shipped", "d:amount": 700, "k:order_id": 7, "k:partition": 0}
    expected[8] = {"d:status": "paid", "d:amount": 800, "k:order_id": 8, "k:partition": 0}
    expected[10] = {"d:status": "paid", "d:amount": 1000, "k:order_id": 10, "k:partition": 0}
    expected[11] = {"d:status": "paid", "d:amount": 1100, "k:order_id": 11, "k:partition": 1}
    expected[13] = {"d:status": "paid", "d:note": "b", "d:amount": 1300, "k:order_id": 13, "k:partition": 1}
    expected[12] = {"d:status": "shipped", "d:note": "keep", "d:amount": 1200, "k:order_id": 12, "k:partition": 0}
    assert rows == expected
    # The query CLI exports the same rows, each cell rendered by its column's type.
    out = run_hbingest("query", "--config", second.config_path, "--full-table", "order_status", "--format",
                       "ndjson").stdout
    exported = [json.loads(line) for line in out.splitlines() if line.strip()]
    assert {int(bytes.fromhex(row["key"])): row["columns"] for row in exported} == expected, out
    assert sorted(reason for reason, _, _ in letters) == ["hbingest.decode.invalid_key", "hbingest.key.bad_key"], \
        letters
