#pragma once
// The daemon's configuration, as loaded and validated from one YAML file.
// Every field has its default here; config/examples/*.yaml documents each option.

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace hbingest::config {

using Millis = std::chrono::milliseconds;

struct KafkaConfig {
  std::string bootstrap_servers;  // required
  std::string group_id = "hbingest";
  // Static group membership (group.instance.id): "" off; "auto" the host name; else verbatim.
  // See hbingest/config/group_instance_id.h.
  std::string group_instance_id;
  std::vector<std::string> topics;                // literal names, or one "^regex" (librdkafka syntax)
  std::map<std::string, std::string> properties;  // passed verbatim to librdkafka (SSL/SASL, ...)
  Millis commit_interval{1000};
  std::size_t poll_batch = 1000;        // messages per poll
  Millis statistics_interval{5000};     // librdkafka statistics (lag metrics); 0 disables
  Millis startup_check_timeout{15000};  // wait for a broker at start; TLS/SASL failures stop the start; 0 skips
};

enum class ThriftTransport { framed, buffered };
enum class ThriftProtocol { binary, compact };

// TLS to the Thrift2 gateways (through a TLS terminator: HBase 2.6 has none for the binary gateway).
struct HBaseTlsConfig {
  bool enabled = false;
  std::optional<std::filesystem::path> ca_file;    // required when enabled; relative to the config file
  std::optional<std::filesystem::path> cert_file;  // client certificate, with key_file
  std::optional<std::filesystem::path> key_file;
  bool verify_hostname = true;
};

// SASL on the Thrift2 gateways' binary transport: what a kerberized HBase's gateway requires
// (hbase.thrift.security.qop set). GSSAPI is the only mechanism HBase's Thrift servers offer.
enum class SaslMechanism { none, gssapi };
// hbase.thrift.security.qop: auth, auth-int (integrity), auth-conf (privacy: encrypted).
enum class SaslQop { authentication, integrity, privacy };

struct HBaseSaslConfig {
  SaslMechanism mechanism = SaslMechanism::none;
  std::string service = "hbase";                // the gateway principal's first component
  std::optional<std::string> principal;         // hbingest's own principal; required with GSSAPI
  std::optional<std::filesystem::path> keytab;  // its keytab; required with GSSAPI; relative to the config file
  SaslQop qop = SaslQop::privacy;               // must equal the gateways' hbase.thrift.security.qop
  std::string server_principal_host = "_HOST";  // "_HOST": each endpoint's host as written
};

struct HBaseConfig {
  std::vector<std::string> endpoints;                     // "host:port" of Thrift2 servers; required, ≥1
  ThriftTransport transport = ThriftTransport::buffered;  // HBase's default (see docs/architecture.md)
  ThriftProtocol protocol = ThriftProtocol::binary;
  Millis connect_timeout{2000};
  Millis read_timeout{10000};
  // framed only: the gateways' hbase.regionserver.thrift.framed.max_frame_size_in_mb (HBase's default)
  std::size_t framed_max_frame_bytes = 2 * 1024 * 1024;
  std::string ns = "default";  // YAML key: namespace
  HBaseTlsConfig tls;
  HBaseSaslConfig sasl;
};

struct WriterConfig {
  // The most writer connections/threads, i.e. batches in flight at once; how many are used is the
  // depth controller's choice (daemon/ingest depth_controller.h).
  int writers = 8;
  std::size_t batch_max_rows = 500;
  std::size_t batch_max_bytes = 2 * 1024 * 1024;  // like hbase.client.write.buffer
  Millis linger{50};
  std::string durability = "USE_DEFAULT";  // USE_DEFAULT | SKIP_WAL | ASYNC_WAL | SYNC_WAL | FSYNC_WAL
  Millis retry_initial_backoff{100};
  Millis retry_max_backoff{10000};
  // Offsets in flight: nullopt (`auto`) derives the bound from the writers' flow (throughput x
  // latency, ingest::derived_inflight_rows); a number caps what is derived.
  std::optional<std::size_t> max_inflight_rows;  // total; consumption pauses above it
  // The exact memory bound of events in flight and librdkafka's read-ahead together.
  std::size_t max_inflight_bytes = 32 * 1024 * 1024;
  std::optional<std::size_t> max_inflight_rows_per_partition;
};

enum class ColumnsMode { fields, raw, both };
enum class TimeFormat { auto_detect, epoch_ms, epoch_s, rfc3339 };
enum class CellTimestamp { event_time, ingest_time };
enum class OnInvalid { dlq, skip, fail };
// How a message value is written (docs/formats.md): JSON text, or Avro, Protobuf or JSON Schema in
// the Confluent wire format with the schema from schema_registry.
enum class EventFormat { json, avro, protobuf, json_schema };
// "json", "avro", "protobuf", "json_schema": what decode.format and decode.topic_formats accept.
std::optional<EventFormat> event_format_named(std::string_view name);
std::string_view event_format_name(EventFormat format);
// How a Kafka message key is read where a route names `key` or `key.<path>` (docs/rows.md, "Inputs"):
// its bytes as text, the same bytes typed as bytes (for cells), or decoded like a value, JSON text
// or Confluent-framed Avro, Protobuf or JSON Schema (a key schema, subject "<topic>-key").
enum class KeyFormat { bytes, text, json, avro, protobuf, json_schema };
// "bytes", "text", and the event format names: what decode.key_format and decode.topic_key_formats accept.
std::optional<KeyFormat> key_format_named(std::string_view name);
std::string_view key_format_name(KeyFormat format);
// The event format that decodes a structured key; nullopt for bytes and text.
std::optional<EventFormat> key_event_format(KeyFormat format);
enum class UnknownType { dlq, default_route, skip };
// What a null field of an event writes (docs/rows.md): nothing, an empty cell, or a delete of the
// column (every version up to the event time: Confluent's HBase sink's semantics).
enum class NullFields { skip, empty, delete_cell };
// What a Kafka tombstone (a record with a null value) does: a dead letter (reason tombstone),
// nothing (its offset is committed), or a delete of its row in every route taking its topic.
enum class OnTombstone { dlq, skip, delete_row };

struct DecodeConfig {
  EventFormat format = EventFormat::json;
  // Topics whose values are written otherwise: topic → format name (event_format_named).
  std::map<std::string, std::string, std::less<>> topic_formats{};
  KeyFormat key_format = KeyFormat::text;
  // Topics whose keys are written otherwise: topic → key format name (key_format_named).
  std::map<std::string, std::string, std::less<>> topic_key_formats{};
  std::string event_type_field = "event_id";
  std::string time_field = "ts";
  TimeFormat time_format = TimeFormat::auto_detect;
  bool kafka_time_fallback = true;  // use the Kafka timestamp when the time field is missing
  ColumnsMode columns = ColumnsMode::fields;
  std::string family = "d";
  std::string raw_qualifier = "raw";
  bool write_null_fields = false;           // true: a null field writes an empty cell (null_fields: empty)
  std::optional<NullFields> null_fields{};  // routes' default; unset: from write_null_fields
  OnTombstone on_tombstone = OnTombstone::dlq;
  std::size_t max_event_bytes = 1024 * 1024;
  std::optional<std::string> ttl_field;  // per-event TTL in ms; may shorten, never lengthen
  CellTimestamp cell_timestamp = CellTimestamp::event_time;
  Millis max_future_skew{3600000};  // cell timestamps further ahead of now go to the DLQ (future_time)
};

// Where the avro, protobuf and json_schema formats fetch the schema an event names (the Confluent
// REST API: Confluent Schema Registry, Apicurio's /apis/ccompat/v7, Karapace, Redpanda).
struct SchemaRegistryBasicAuthConfig {
  std::optional<std::string> user;
  std::optional<std::string> password;  // a secret (support::is_secret_key); ${file:} / ${env} references
};

struct SchemaRegistryTlsConfig {
  std::optional<std::filesystem::path> ca_file;    // the registry's CA (the system's when unset)
  std::optional<std::filesystem::path> cert_file;  // client certificate, with key_file
  std::optional<std::filesystem::path> key_file;
};

struct SchemaRegistryConfig {
  std::optional<std::string> url;  // base URL of the API; unset: no registry (decode.format json only)
  SchemaRegistryBasicAuthConfig basic_auth;
  SchemaRegistryTlsConfig tls;
  Millis timeout{5000};                            // connect, each read, and a whole answer
  std::size_t cache_max_schemas = 1000;            // parsed schemas kept by id
  std::size_t cache_max_bytes = 64 * 1024 * 1024;  // and the bytes they hold
};

// One rule of a route's row mapping (docs/rows.md, "Columns").
struct ColumnConfig {
  std::string from;                  // an input name (docs/rows.md, "Inputs"), or "*": every top-level field
  std::string to;                    // "family:qualifier", or "family:*": one cell per member, named as the member
  std::string type = "text";         // text, string, long, int, short, double, float, boolean, bigdecimal, bytes
  std::vector<std::string> exclude;  // with "*" or a record: members left out
  std::string source;                // "config.yaml:42" for messages
};

// The values a table template variable may take from the data: a list, or a regular expression.
struct TableValuesConfig {
  std::vector<std::string> values;
  std::optional<std::string> pattern;  // ECMAScript, matched against the whole value
};

// A route sends events of some types (from some topics) to a table with a key spec and a row mapping.
// The key spec is given by exactly one of: preset (+ preset_params), key_file, key_yaml (inline
// YAML text of a spec, kept with its source line for error messages).
struct RouteConfig {
  std::string name;                      // unset: "routes[i]" / "default_route"
  std::vector<std::string> topics;       // empty: every subscribed topic
  std::vector<std::string> event_types;  // empty only for the default route
  // Without namespace; may be a template: ${topic}, ${event_type}, ${field:INPUT} (docs/rows.md).
  std::string table;
  std::string table_source;                                            // "config.yaml:42" for messages
  std::map<std::string, TableValuesConfig, std::less<>> table_values;  // template variable → allowed values
  std::size_t max_tables = 100;                                        // distinct tables a template may produce
  std::optional<std::string> format;                                   // the input format of `topics`
  std::optional<std::vector<ColumnConfig>> columns;                    // unset: decode.columns
  std::optional<NullFields> null_fields;                               // unset: decode's
  std::optional<OnTombstone> on_tombstone;                             // unset: decode.on_tombstone
  std::optional<std::string> preset;
  std::map<std::string, std::string, std::less<>> preset_params;
  std::optional<std::filesystem::path> key_file;
  std::optional<std::string> key_yaml;
  std::string key_source;  // "config.yaml:42" for messages
};

struct TableConfig {
  Millis ttl{600000};            // family TTL and per-mutation _ttl (10 min)
  bool create_table = false;     // create at start (like `hbingest bootstrap`)
  Millis check_interval{30000};  // how often `run` checks its tables exist, are enabled, have the family
  std::string bloom_filter = "ROW";
  std::string compression = "NONE";
};

struct DlqConfig {
  std::string topic = "hbingest-dlq";
  OnInvalid on_invalid = OnInvalid::dlq;
  UnknownType unknown_type = UnknownType::dlq;
  std::size_t max_letter_bytes = 900 * 1024;      // below a broker's default message.max.bytes (1 MB)
  std::map<std::string, std::string> properties;  // extra librdkafka producer properties
};

struct HttpConfig {
  bool enabled = true;
  std::string listen = "127.0.0.1:8080";
  std::optional<std::string> health_listen;  // unset: /healthz, /readyz, /metrics only on `listen`
  std::optional<std::string> bearer_token;   // resolved secret (from ${file:..}/${ENV})
  bool metrics_auth = false;                 // /metrics needs the bearer token too
  bool allow_unauthenticated = false;        // a non-loopback `listen` without a token
  int max_concurrent_queries = 8;
  // Connection limits (see HttpServerOptions).
  int workers = 16;
  int max_queued_connections = 64;
  int max_connections_per_client = 0;  // 0: half of `workers` (server::default_connections_per_client)
  std::size_t max_header_bytes = 16 * 1024;
  Millis header_timeout{5000};
  Millis keep_alive_timeout{5000};
  int keep_alive_max_requests = 100;
  Millis write_timeout{30000};
  std::size_t max_response_bytes = 16 * 1024 * 1024;
  std::optional<std::string> tls_cert_file;  // both set: HTTPS on `listen` and `health_listen`
  std::optional<std::string> tls_key_file;
};

struct QueryConfig {
  int concurrency = 16;  // scans in flight; effective min(n, this)
  int chunk_rows = 500;
  int prefetch_chunks = 2;  // per scan
  Millis deadline{10000};
  std::size_t max_limit = 10000;
  std::size_t default_limit = 1000;
};

enum class LogFormat { text, json };

struct LoggingConfig {
  std::string level = "info";  // trace debug info warn error critical off
  LogFormat format = LogFormat::text;
};

struct Config {
  std::filesystem::path source;  // the file it was loaded from
  KafkaConfig kafka;
  HBaseConfig hbase;
  WriterConfig writer;
  DecodeConfig decode;
  SchemaRegistryConfig schema_registry;
  std::vector<RouteConfig> routes;  // at least one route or a default_route
  std::optional<RouteConfig> default_route;
  TableConfig table;
  DlqConfig dlq;
  HttpConfig http;
  QueryConfig query;
  LoggingConfig logging;
  Millis shutdown_deadline{30000};
  // Every secret value the file resolved: values of secret keys (support::is_secret_key), contents
  // of ${file:} files whatever the key, the HTTP bearer token. --print-effective prints "***" for any
  // value holding one, and loading registers them with support::register_secrets so that logs
  // (librdkafka's too) and error messages scrub them.
  std::vector<std::string> secrets;
};

// All problems found in one file, each "path:line:col: key.path: message".
class ConfigError : public std::runtime_error {
 public:
  explicit ConfigError(std::vector<std::string> problems);
  const std::vector<std::string>& problems() const noexcept { return problems_; }

 private:
  std::vector<std::string> problems_;
};

}  // namespace hbingest::config
