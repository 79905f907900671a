"""decode.format avro | protobuf | json_schema end to end, against the stack's real schema registry
(Apicurio, HBINGEST_SCHEMA_REGISTRY). The producers are independent: confluent-kafka's own
AvroSerializer, ProtobufSerializer (protoc --python_out gencode) and JSONSerializer, registering
their schemas as any Confluent-platform producer does (schema_peers.py).

One daemon reads four topics, one per format (decode.topic_formats), into one table. Every event is
also sent as JSON, its JSON twin, to the same offset of another partition, so each row and its twin
differ only in the key's partition: Avro on partition 1 (twins on 0), Protobuf on 2 and JSON Schema
on 3 (twins on 4). Every row must equal its twin, cell by cell.
"""

import json
import schema_peers
from confluent_kafka.serialization import MessageField, SerializationContext
from support import consume_all, create_topic, key_position, now_ms, produce, query_events, run_hbingest, scan_all, \
    unique, wait_for

PARTITION = {"avro": 1, "protobuf": 2, "json_schema": 3}
TWIN_PARTITION = {"avro": 0, "protobuf": 4, "json_schema": 4}

AVRO_V1 = {
    "type": "record", "name": "Event", "namespace": "hbingest.e2e",
    "fields": [
        {"name": "event_id", "type": "string"},
        {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-millis"}},
        {"name": "user_id", "type": "string"},
        {"name": "ok", "type": "boolean"},
        {"name": "amount", "type": "double"},
        {"name": "count", "type": "int"},
        {"name": "note", "type": ["null", "string"], "default": None},
        {"name": "items", "type": {"type": "array", "items": {
            "type": "record", "name": "Item",
            "fields": [{"name": "sku", "type": "string"}, {"name": "qty", "type": "int"},
                       {"name": "price", "type": "double"}]}}},
    ]}

# v2: `channel` added with a default, `ok` removed, `count` widened int -> long.
AVRO_V2 = {
    "type": "record", "name": "Event", "namespace": "hbingest.e2e",
    "fields": [f for f in AVRO_V1["fields"] if f["name"] not in ("ok", "count")] + [
        {"name": "count", "type": "long"},
        {"name": "channel", "type": "string", "default": "web"},
    ]}

EVENT_PROTO = """syntax = "proto3";
package hbingest.e2e;
import "google/protobuf/timestamp.proto";
message Event {
  string event_id = 1;
  google.protobuf.Timestamp ts = 2;
  string user_id = 3;
  bool ok = 4;
  double amount = 5;
  int64 count = 6;
  optional string note = 7;
  message Item { string sku = 1; int32 qty = 2; double price = 3; }
  repeated Item items = 8;
}
"""


def json_schema_text(tag):
    # A title of its own: Apicurio types one content by the first artifact that held it.
    return json.dumps({"$schema": "http://json-schema.org/draft-07/schema#", "title": "Event" + tag,
                       "type": "object", "properties": {"event_id": {"type": "string"}, "ts": {"type": "integer"}},
                       "required": ["event_id", "ts"]})


def event(i, ts, version=1):
    """The JSON twin of event i: the fields in schema order, as the other formats render them."""
    e = {"event_id": "order" if i % 2 else "login", "ts": ts, "user_id": "u%03d" % i}
    if version == 1:
        e["ok"] = i % 3 == 0
    e["amount"] = [12.5, 410.0, 0.1, -3.25][i % 4]
    if version == 1:
        e["count"] = i
    if i % 5:
        e["note"] = "n%d" % i
    e["items"] = [{"sku": "s%d" % k, "qty": k + 1, "price": 1.5 * k} for k in range(i % 3)]
    if version == 2:
        e["count"] = 2 ** 40 + i  # beyond int: the widened field
        e["channel"] = "app"
    return e


def protobuf_of(module, e):
    msg = module.Event(event_id=e["event_id"], user_id=e["user_id"], ok=e["ok"], amount=e["amount"],
                       count=e["count"])
    msg.ts.FromMilliseconds(e["ts"])
    if "note" in e:
        msg.note = e["note"]
    for item in e["items"]:
        msg.items.add(sku=item["sku"], qty=item["qty"], price=item["price"])
    return msg


def test_avro_protobuf_and_json_schema_rows_equal_their_json_twins(daemon_factory, tmp_path):
    tag = unique("f")
    topics = {fmt: "%s_%s" % (tag, fmt) for fmt in ("json", "avro", "protobuf", "json_schema")}
    table, dlq = unique("tbl"), tag + "_dlq"
    for topic in topics.values():
        create_topic(topic, partitions=5)
    create_topic(dlq, partitions=1)

    registry = schema_peers.client()
    ctx = lambda fmt: SerializationContext(topics[fmt], MessageField.VALUE)  # noqa: E731
    avro_v1 = schema_peers.avro_serializer(json.dumps(AVRO_V1), registry)
    avro_v2 = schema_peers.avro_serializer(json.dumps(AVRO_V2), registry)
    module = schema_peers.protobuf_module(EVENT_PROTO, "e2e_event_" + tag[-8:])
    proto = schema_peers.protobuf_serializer(module.Event, registry)
    jschema = schema_peers.json_schema_serializer(json_schema_text(tag), registry)

    base = now_ms() - 5000
    count = 60
    avro_twins, v1_twins = [], []
    framed = {"avro": [], "protobuf": [], "json_schema": []}
    for i in range(count):
        version = 2 if i % 3 == 2 else 1  # v1 and v2 interleaved in one partition
        e = event(i, base + i, version)
        avro_twins.append(json.dumps(e))
        framed["avro"].append((avro_v2 if version == 2 else avro_v1)(e, ctx("avro")))
        v1 = event(i, base + i, 1)  # Protobuf and JSON Schema keep one version
        v1_twins.append(json.dumps(v1))
        framed["protobuf"].append(proto(protobuf_of(module, v1), ctx("protobuf")))
        framed["json_schema"].append(jschema(v1, ctx("json_schema")))
    assert len({schema_peers.frame_id(m) for m in framed["avro"]}) == 2, "two writer schemas interleaved"

    produce(topics["json"], avro_twins, partition_of=lambda i: TWIN_PARTITION["avro"])
    produce(topics["json"], v1_twins, partition_of=lambda i: TWIN_PARTITION["protobuf"])
    for fmt, messages in framed.items():
        produce(topics[fmt], messages, partition_of=lambda i, p=PARTITION[fmt]: p)

    daemon = daemon_factory(topics["json"], table, **{
        "kafka.topics": list(topics.values()),
        "dlq.topic": dlq,
        "decode.topic_formats": {topics[fmt]: fmt for fmt in framed},
        # Four topics into one table: the key tells their partitions apart by the topic's hash.
        "routes": [{"event_types": ["login", "order"], "table": table, "preset": "events_by_topic",
                    "preset_params": {"buckets": "8"}}],
        "schema_registry.url": schema_peers.registry_url(),
    }).start()
    total = count * 5
    wait_for(lambda: daemon.metric("hbingest_rows_written_total") >= total, 90,
             "every event of every format stored")
    assert daemon.metric("hbingest_events_invalid_total") == 0, daemon.log_text()[-3000:]

    scanned = scan_all(table)
    rows = {key_position(key): cells for key, cells in scanned}
    assert len(rows) == total, "one row per event"
    for fmt in framed:
        for offset in range(count):
            ours, twin = rows[(PARTITION[fmt], offset)], rows[(TWIN_PARTITION[fmt], offset)]
            assert ours == twin, "%s offset %d differs from its JSON twin" % (fmt, offset)
    # v2's widened count beyond int, and its added field, arrived as written.
    assert rows[(PARTITION["avro"], 2)][b"d:count"] == str(2 ** 40 + 2).encode()
    assert rows[(PARTITION["avro"], 2)][b"d:channel"] == b"app"
    assert b"d:ok" not in rows[(PARTITION["avro"], 2)]

    # The key spec kept working: a query answers the Avro rows with the JSON ones, in time order.
    status, body = query_events(daemon, event_id="login", **{"from": base, "to": base + count}, limit=1000)
    assert status == 200, body
    assert len(body["rows"]) == 5 * len([i for i in range(count) if i % 2 == 0])
    assert consume_all(dlq, 1, timeout=2) == []
    daemon.stop()

    # `hbingest key build` reads a framed value as the daemon does: the same key, byte for byte.
    keys = {key_position(key): key for key, _ in scanned}
    for fmt, offset in (("avro", 2), ("protobuf", 3)):
        value_file = tmp_path / ("%s.bin" % fmt)
        value_file.write_bytes(framed[fmt][offset])
        out = run_hbingest("key", "build", "--preset", "events_by_topic", "--param", "buckets=8", "--format", fmt,
                           "--registry", schema_peers.registry_url(), "--event-file", str(value_file),
                           "--topic", topics[fmt], "--partition", str(PARTITION[fmt]), "--offset", str(offset)).stdout
        hex_line = next(line for line in out.splitlines() if line.startswith("hex:"))
        assert hex_line.split()[1] == keys[(PARTITION[fmt], offset)].hex(), (fmt, out)
