"""Independent producers of Confluent-framed events: confluent-kafka's own AvroSerializer,
ProtobufSerializer and JSONSerializer, registering through the stack's schema registry
(HBINGEST_SCHEMA_REGISTRY, Apicurio's Confluent-compatible API). For the end-to-end tests of the
Avro, Protobuf and JSON Schema formats, and runnable alone as a probe of the registry:

  .venv/bin/python tests/integration/python/schema_peers.py check

registers an Avro, a Protobuf and a JSON schema, serializes one record with each, checks the
Confluent frame, and prints what the registry answers for each id (for Protobuf, Apicurio answers
base64 of a serialized FileDescriptorProto, not .proto text).
"""

import importlib
import json
import os
import subprocess
import sys
import tempfile
import urllib.request
import uuid

from confluent_kafka.schema_registry import SchemaRegistryClient
from confluent_kafka.schema_registry.avro import AvroSerializer
from confluent_kafka.schema_registry.json_schema import JSONSerializer
from confluent_kafka.schema_registry.protobuf import ProtobufSerializer
from confluent_kafka.serialization import MessageField, SerializationContext


def registry_url():
    url = os.environ.get("HBINGEST_SCHEMA_REGISTRY")
    if not url:
        raise RuntimeError("HBINGEST_SCHEMA_REGISTRY is not set: eval \"$(stack/hbstack env)\"")
    return url


def client(url=None):
    return SchemaRegistryClient({"url": url or registry_url()})


def protobuf_modules(files):
    """Compiles .proto files ({path: text}, imports by those paths) with protoc --python_out (the
    gencode a Python producer ships) and imports them; returns {path: module}."""
    out = tempfile.mkdtemp(prefix="hbingest-proto-")
    for path, text in files.items():
        os.makedirs(os.path.dirname(os.path.join(out, path)), exist_ok=True)
        with open(os.path.join(out, path), "w") as f:
            f.write(text)
    subprocess.run(["protoc", "--proto_path=" + out, "--python_out=" + out, *files],
                   check=True, capture_output=True)
    sys.path.insert(0, out)
    try:
        return {path: importlib.import_module(path[:-len(".proto")].replace("/", ".") + "_pb2")
                for path in files}
    finally:
        sys.path.remove(out)


def protobuf_module(proto_text, name):
    """One .proto file `name`.proto, compiled and imported (module `name`_pb2)."""
    return protobuf_modules({name + ".proto": proto_text})[name + ".proto"]


def avro_serializer(schema_str, registry=None, **conf):
    return AvroSerializer(registry or client(), schema_str, conf=conf or None)


def protobuf_serializer(message_class, registry=None, **conf):
    # use.deprecated.format False: message indexes as zig-zag varints (the current wire format).
    return ProtobufSerializer(message_class, registry or client(), conf={"use.deprecated.format": False, **conf})


def json_schema_serializer(schema_str, registry=None, **conf):
    return JSONSerializer(schema_str, registry or client(), conf=conf or None)


def frame_id(data):
    """The schema id of a Confluent frame (magic byte 0, 4-byte big-endian id)."""
    assert data[0] == 0, "not Confluent framed: first byte 0x%02x" % data[0]
    return int.from_bytes(data[1:5], "big")


def get_json(path, url=None):
    with urllib.request.urlopen((url or registry_url()) + path, timeout=10) as r:
        return json.load(r)


ORDER_AVRO = json.dumps({
    "type": "record", "name": "Order", "namespace": "hbingest.probe",
    "fields": [{"name": "event_id", "type": "string"},
               {"name": "order_id", "type": "long"},
               {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-millis"}},
               {"name": "amount", "type": ["null", "double"], "default": None}]})

ORDER_PROTO = """syntax = "proto3";
package hbingest.probe;
import "google/protobuf/timestamp.proto";
message Order {
  string event_id = 1;
  int64 order_id = 2;
  google.protobuf.Timestamp ts = 3;
  message Line { string sku = 1; int32 qty = 2; }
  repeated Line lines = 4;
}
"""

MONEY_PROTO = """syntax = "proto3";
package hbingest.probe;
message Money { int64 cents = 1; string currency = 2; }
"""

ORDER_JSON_SCHEMA = json.dumps({
    "$schema": "http://json-schema.org/draft-07/schema#", "title": "Order", "type": "object",
    "properties": {"event_id": {"type": "string"}, "order_id": {"type": "integer"}},
    "required": ["event_id", "order_id"]})


def check():
    tag = uuid.uuid4().hex[:8]
    registry = client()

    def ctx(kind):  # a subject per format, as producers of three topics would have them
        return SerializationContext("schema-peers-%s-%s" % (kind, tag), MessageField.VALUE)

    avro = avro_serializer(ORDER_AVRO, registry)
    data = avro({"event_id": "order_created", "order_id": 7, "ts": 1700000000000, "amount": 12.5}, ctx("avro"))
    sid = frame_id(data)
    answer = get_json("/schemas/ids/%d" % sid)
    print("avro: %d bytes, schema id %d; /schemas/ids/%d -> schemaType %s, schema %s..."
          % (len(data), sid, sid, answer.get("schemaType", "(absent: AVRO)"), answer["schema"][:60]))

    # An import of our own (not a well-known type): the serializer registers it first, under the
    # subject named by its path, and the order's schema references it.
    modules = protobuf_modules({"probe%s/money.proto" % tag: MONEY_PROTO,
                                "probe%s/order.proto" % tag: ORDER_PROTO.replace(
                                    'import "google/protobuf/timestamp.proto";',
                                    'import "google/protobuf/timestamp.proto";\nimport "probe%s/money.proto";' % tag)
                                .replace("repeated Line lines = 4;", "repeated Line lines = 4;\n  Money total = 5;")})
    order_pb2 = modules["probe%s/order.proto" % tag]
    msg = order_pb2.Order(event_id="order_created", order_id=7)
    msg.ts.FromMilliseconds(1700000000000)
    msg.lines.add(sku="a", qty=2)
    msg.total.cents = 1250
    msg.total.currency = "EUR"
    data = protobuf_serializer(order_pb2.Order, registry)(msg, ctx("protobuf"))
    sid = frame_id(data)
    answer = get_json("/schemas/ids/%d" % sid)
    print("protobuf: %d bytes, schema id %d, message indexes byte 0x%02x; /schemas/ids/%d -> schemaType %s, "
          "references %s, schema %s..." % (len(data), sid, data[5], sid, answer.get("schemaType"),
                                           answer.get("references"), answer["schema"][:60]))
    for ref in answer.get("references") or []:
        dep = get_json("/subjects/%s/versions/%d" % (urllib.request.quote(ref["subject"], safe=""),
                                                      ref["version"]))
        print("  reference %s -> subject %s version %d, id %s, schema %s..."
              % (ref["name"], ref["subject"], ref["version"], dep.get("id"), dep["schema"][:60]))

    # Apicurio keeps one content per text, typed by the first artifact holding it: a text of its
    # own (the title) so an earlier run's identical text under another subject cannot type it.
    schema = json.loads(ORDER_JSON_SCHEMA)
    schema["title"] = "Order" + tag
    data = json_schema_serializer(json.dumps(schema), registry)({"event_id": "order_created", "order_id": 7}, ctx("json"))
    sid = frame_id(data)
    answer = get_json("/schemas/ids/%d" % sid)
    print("json_schema: %d bytes, schema id %d; /schemas/ids/%d -> schemaType %s"
          % (len(data), sid, sid, answer.get("schemaType")))


if __name__ == "__main__":
    if sys.argv[1:] != ["check"]:
        sys.exit(__doc__)
    check()
