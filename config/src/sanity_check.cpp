#include "sanity_check.h"

#include <regex.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <map>
#include <optional>
#include <set>

#include "hbingest/config/duration.h"
#include "hbingest/config/group_instance_id.h"
#include "hbingest/config/size.h"
#include "hbingest/support/host_port.h"

namespace hbingest::config::detail {

namespace {

// Whether librdkafka's subscription `pattern` ("^regex") takes `topic`: librdkafka compiles it
// with POSIX regcomp(REG_EXTENDED | REG_NOSUB), leading "^" included (rdregex.c). nullopt when the
// pattern does not compile.
std::optional<bool> subscription_matches(const std::string& pattern, const std::string& topic) {
  regex_t re;
  if (regcomp(&re, pattern.c_str(), REG_EXTENDED | REG_NOSUB) != 0) return std::nullopt;
  const bool matches = regexec(&re, topic.c_str(), 0, nullptr, 0) == 0;
  regfree(&re);
  return matches;
}

// "auto" is resolved where the daemon runs: the host name must be a valid id and a stable one. A
// Deployment pod's name changes with every restart, so each restart would leave a member behind
// holding its partitions until session.timeout.ms: worse than no static membership at all.
void check_group_instance_id(const Config& c, Reader& r) {
  if (c.kafka.group_instance_id != kGroupInstanceIdAuto) return;
  const std::string path = "kafka.group_instance_id";
  const std::string host = host_name();
  if (const auto problem = group_instance_id_problem(host)) {
    r.problem_at(path, "auto: the host name '" + host + "' " + *problem + "; set an id instead");
  } else if (looks_like_deployment_pod_name(host)) {
    r.problem_at(path, "auto: the host name '" + host +
                           "' looks like a Deployment pod's generated name, which changes with every restart; run "
                           "hbingest as a StatefulSet (stable pod names) or set an id per instance");
  }
}

void check_kafka(const Config& c, Reader& r) {
  check_group_instance_id(c, r);
  for (const auto& [name, value] : c.kafka.properties) {
    const std::string path = "kafka.properties." + name;
    // auto.commit.enable is librdkafka's legacy (topic-level) alias of enable.auto.commit.
    if (name == "enable.auto.commit" || name == "auto.commit.enable" || name == "enable.auto.offset.store") {
      r.problem_at(path,
                   "hbingest manages commits itself (offsets are committed only after HBase acknowledged "
                   "the rows); remove this property");
    } else if (name == "group.id") {
      r.problem_at(path, "set kafka.group_id instead");
    } else if (name == "group.instance.id") {
      r.problem_at(path, "set kafka.group_instance_id instead (hbingest resolves \"auto\" and checks the id)");
    } else if (name == "bootstrap.servers" || name == "metadata.broker.list") {
      r.problem_at(path, "set kafka.bootstrap_servers instead");
    }
  }
  const bool has_regex = std::any_of(c.kafka.topics.begin(), c.kafka.topics.end(),
                                     [](const std::string& t) { return t.starts_with('^'); });
  if (has_regex && c.kafka.topics.size() > 1) {
    r.problem_at("kafka.topics", "a \"^regex\" subscription must be the only entry");
  }
  // Rows HBase refuses for good go to the dead-letter topic under `skip` as well (only `fail` stops).
  const bool dlq_used = c.dlq.on_invalid != OnInvalid::fail || c.dlq.unknown_type == UnknownType::dlq;
  if (dlq_used && std::find(c.kafka.topics.begin(), c.kafka.topics.end(), c.dlq.topic) != c.kafka.topics.end()) {
    r.problem_at("dlq.topic",
                 r.shown("dlq.topic", c.dlq.topic) + " is also consumed (kafka.topics); bad events would loop");
  }
  if (!dlq_used) return;
  for (std::size_t i = 0; i < c.kafka.topics.size(); ++i) {
    const std::string& topic = c.kafka.topics[i];
    if (!topic.starts_with('^')) continue;
    const std::string path = "kafka.topics[" + std::to_string(i) + "]";
    const auto matches = subscription_matches(topic, c.dlq.topic);
    if (!matches) {
      r.problem_at(path, r.shown(path, topic) +
                             " is not a valid regular expression (POSIX extended, as librdkafka "
                             "compiles it)");
    } else if (*matches) {
      const auto dlq_mark = r.mark_of("dlq.topic");
      r.problem_at(path, r.shown(path, topic) + " also subscribes to the dead-letter topic " +
                             r.shown("dlq.topic", c.dlq.topic) + " (dlq.topic" +
                             (dlq_mark ? ", " + r.location(*dlq_mark) : std::string(", the default")) +
                             "); bad events would loop: exclude it from the pattern or name another dlq.topic");
    }
  }
}

// Whether librdkafka properties ask for GSSAPI (sasl.mechanism or its alias, any case).
bool asks_for_gssapi(const std::map<std::string, std::string>& properties) {
  for (const char* key : {"sasl.mechanism", "sasl.mechanisms"}) {
    const auto it = properties.find(key);
    if (it == properties.end()) continue;
    std::string value = it->second;
    std::transform(value.begin(), value.end(), value.begin(), [](unsigned char ch) { return std::toupper(ch); });
    if (value == "GSSAPI") return true;
  }
  return false;
}

// The dead-letter producer takes its Kerberos ticket from the kafka link's login (one cache for
// librdkafka in the process, KRB5CCNAME), never from dlq.properties: GSSAPI only there would find no
// ticket (librdkafka's own kinit is off), and another principal or keytab there would be ignored
// while the producer authenticates as kafka.properties' principal.
void check_dlq_kerberos(const Config& c, Reader& r) {
  std::map<std::string, std::string> producer;
  for (const auto& [key, value] : c.kafka.properties) {
    if (key.rfind("sasl.", 0) == 0) producer[key] = value;
  }
  for (const auto& [key, value] : c.dlq.properties) producer[key] = value;
  if (!asks_for_gssapi(producer)) return;
  if (!asks_for_gssapi(c.kafka.properties)) {
    r.problem_at("dlq.properties",
                 "sasl.mechanism GSSAPI for the dead-letter producer needs kafka.properties to use GSSAPI too: "
                 "hbingest logs in once for Kafka, from kafka.properties' sasl.kerberos.keytab and principal, and "
                 "the dead-letter producer uses that ticket");
    return;
  }
  for (const char* key : {"sasl.kerberos.principal", "sasl.kerberos.keytab"}) {
    const auto own = c.dlq.properties.find(key);
    if (own == c.dlq.properties.end()) continue;
    const auto shared = c.kafka.properties.find(key);
    if (shared != c.kafka.properties.end() && shared->second == own->second) continue;
    r.problem_at("dlq.properties." + std::string(key),
                 "differs from kafka.properties: the dead-letter producer authenticates with the kafka link's "
                 "Kerberos ticket (one login for Kafka per process), so it would be ignored; remove it");
  }
}

// With GSSAPI the daemon logs in for Kafka itself, from librdkafka's sasl.kerberos.keytab
// (app/kerberos_logins.h): without one `run` cannot start, so check-config says so first.
void check_kafka_kerberos(const Config& c, Reader& r) {
  if (!asks_for_gssapi(c.kafka.properties)) return;
  const auto keytab = c.kafka.properties.find("sasl.kerberos.keytab");
  if (keytab == c.kafka.properties.end() || keytab->second.empty()) {
    r.problem_at("kafka.properties",
                 "sasl.mechanism GSSAPI needs sasl.kerberos.keytab: hbingest logs in from the keytab itself (as "
                 "sasl.kerberos.principal) and keeps the ticket valid; librdkafka's kinit is not used");
  }
}

void check_dlq(const Config& c, Reader& r) {
  check_kafka_kerberos(c, r);
  check_dlq_kerberos(c, r);
  // The producer refuses a record over its message.max.bytes before it reaches the broker: a
  // letter cut to max_letter_bytes must pass it.
  const auto it = c.dlq.properties.find("message.max.bytes");
  if (it == c.dlq.properties.end()) return;
  std::size_t producer_max = 0;
  const auto [end, error] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), producer_max);
  if (error != std::errc{} || end != it->second.data() + it->second.size()) return;  // librdkafka reports it
  if (c.dlq.max_letter_bytes > producer_max) {
    r.problem_at("dlq.max_letter_bytes", "(" + format_size(c.dlq.max_letter_bytes) +
                                             ") is larger than dlq.properties.message.max.bytes (" +
                                             r.shown("dlq.properties.message.max.bytes", it->second, false) +
                                             "); the producer would refuse such letters");
  }
}

// hbase.sasl: GSSAPI needs a principal and its keytab; without a mechanism, a principal or keytab
// would suggest Kerberos where there is none (like hbase.tls files without hbase.tls.enabled).
void check_gateway_sasl(const Config& c, Reader& r) {
  const HBaseSaslConfig& sasl = c.hbase.sasl;
  if (sasl.mechanism == SaslMechanism::gssapi) {
    // A key that was present but refused (an unreadable keytab) has its own problem already.
    if (!sasl.principal && !r.seen("hbase.sasl.principal")) {
      r.problem_at("hbase.sasl.principal",
                   "required when hbase.sasl.mechanism is GSSAPI (hbingest's own principal, e.g. "
                   "hbingest/host@REALM)");
    }
    if (!sasl.keytab && !r.seen("hbase.sasl.keytab")) {
      r.problem_at("hbase.sasl.keytab", "required when hbase.sasl.mechanism is GSSAPI (the keytab of the principal)");
    }
    if (sasl.principal && sasl.principal->find_first_of(" \t\r\n") != std::string::npos) {
      r.problem_at("hbase.sasl.principal", r.shown("hbase.sasl.principal", *sasl.principal) +
                                               " is not a Kerberos principal (it holds white space)");
    }
    const std::string& host = sasl.server_principal_host;
    if (host != "_HOST" && (host.find_first_of("/@: \t") != std::string::npos)) {
      r.problem_at("hbase.sasl.server_principal_host",
                   r.shown("hbase.sasl.server_principal_host", host) +
                       " must be a host name (the part between '/' and '@' of the gateways' principal), or _HOST");
    }
    // HBase's Thrift servers refuse to start with SASL over framed ("authentication doesn't work
    // with framed transport yet"): the SASL frames take the place of Thrift's.
    if (c.hbase.transport == ThriftTransport::framed) {
      r.problem_at("hbase.transport",
                   "framed cannot be used with hbase.sasl.mechanism GSSAPI (HBase's Thrift servers "
                   "speak SASL over the buffered transport only): set hbase.transport: buffered");
    }
    if (sasl.service.find_first_of("/@ \t") != std::string::npos) {
      r.problem_at("hbase.sasl.service", r.shown("hbase.sasl.service", sasl.service) +
                                             " must be the first component of the gateways' principal only "
                                             "(hbase, not hbase/host@REALM)");
    }
    return;
  }
  // Only what names an identity: service, qop and the host have defaults that --print-effective
  // writes out, and a printed config must load again.
  for (const auto& [key, set] : {std::pair{"hbase.sasl.principal", sasl.principal.has_value()},
                                 std::pair{"hbase.sasl.keytab", sasl.keytab.has_value()}}) {
    if (set) {
      r.problem_at(key,
                   "is set but hbase.sasl.mechanism is none: the gateways would be reached without Kerberos; set "
                   "hbase.sasl.mechanism: GSSAPI, or remove it");
    }
  }
}

void check_endpoints(const Config& c, Reader& r) {
  for (std::size_t i = 0; i < c.hbase.endpoints.size(); ++i) {
    const std::string path = "hbase.endpoints[" + std::to_string(i) + "]";
    try {
      support::parse_host_port(c.hbase.endpoints[i], 1);
    } catch (const std::invalid_argument& e) {
      r.problem_at(path, r.invalid(path, e.what(), "host:port"));
    }
  }
  const HBaseTlsConfig& tls = c.hbase.tls;
  if (tls.enabled && !tls.ca_file && !r.seen("hbase.tls.ca_file")) {
    r.problem_at("hbase.tls.ca_file",
                 "required when hbase.tls.enabled is true (the CA the gateway's certificate "
                 "must chain to)");
  }
  if (tls.cert_file.has_value() != tls.key_file.has_value()) {
    r.problem_at(tls.cert_file ? "hbase.tls.cert_file" : "hbase.tls.key_file",
                 "cert_file and key_file go together (a client certificate and its key)");
  }
  if (!tls.enabled) {
    for (const auto& [key, file] :
         {std::pair{"hbase.tls.ca_file", tls.ca_file}, std::pair{"hbase.tls.cert_file", tls.cert_file},
          std::pair{"hbase.tls.key_file", tls.key_file}}) {
      if (file) {
        r.problem_at(key,
                     "is set but hbase.tls.enabled is false: the gateways would be reached in plain text; set "
                     "hbase.tls.enabled: true, or remove it");
      }
    }
  }
  check_gateway_sasl(c, r);
  const std::string& ns = c.hbase.ns;
  if (!std::all_of(ns.begin(), ns.end(),
                   [](char ch) { return std::isalnum(static_cast<unsigned char>(ch)) || ch == '_'; })) {
    r.problem_at("hbase.namespace", r.shown("hbase.namespace", ns) + " may only hold letters, digits and '_'");
  }
  if (c.http.enabled) {
    try {
      const auto listen = support::parse_host_port(c.http.listen, 0);
      // A token source that failed to resolve is reported already: the port was not meant to be open.
      const bool token_failed =
          r.has_problem("http.bearer_token") || r.has_problem("http.token_file") || r.has_problem("http.token_env");
      if (!support::is_loopback_host(listen.host) && !c.http.bearer_token && !c.http.allow_unauthenticated &&
          !token_failed) {
        r.problem_at("http.listen",
                     r.shown("http.listen", c.http.listen) +
                         " is reachable from the network but no bearer token is set: anyone reaching it could "
                         "query; set http.token_file (or token_env / bearer_token), or http.allow_unauthenticated: "
                         "true to serve it without authentication on purpose");
      }
    } catch (const std::invalid_argument& e) {
      r.problem_at("http.listen", r.invalid("http.listen", e.what(), "host:port"));
    }
    if (c.http.health_listen) {
      try {
        support::parse_host_port(*c.http.health_listen, 0);
      } catch (const std::invalid_argument& e) {
        r.problem_at("http.health_listen", e.what());
      }
    }
    if (c.http.tls_cert_file.has_value() != c.http.tls_key_file.has_value()) {
      r.problem_at(c.http.tls_cert_file ? "http.tls_cert_file" : "http.tls_key_file",
                   "set both http.tls_cert_file and http.tls_key_file, or neither");
    }
  }
  if (c.http.metrics_auth && !c.http.bearer_token) {
    r.problem_at("http.metrics_auth", "is true but no bearer token is set (http.token_file, token_env, bearer_token)");
  }
  int token_sources = 0;
  for (const char* key : {"http.bearer_token", "http.token_file", "http.token_env"})
    token_sources += r.seen(key) ? 1 : 0;
  if (token_sources > 1) {
    r.problem_at("http.bearer_token", "set only one of bearer_token, token_file, token_env");
  }
}

void check_writer(const Config& c, Reader& r) {
  const WriterConfig& w = c.writer;
  if (w.retry_initial_backoff > w.retry_max_backoff) {
    r.problem_at("writer.retry_initial_backoff", "(" + format_duration(w.retry_initial_backoff) +
                                                     ") is larger than writer.retry_max_backoff (" +
                                                     format_duration(w.retry_max_backoff) + ")");
  }
  if (w.max_inflight_rows && *w.max_inflight_rows < w.batch_max_rows) {
    r.problem_at("writer.max_inflight_rows", "(" + std::to_string(*w.max_inflight_rows) +
                                                 ") is below writer.batch_max_rows (" +
                                                 std::to_string(w.batch_max_rows) + "); no batch could fill");
  }
  if (w.max_inflight_rows && w.max_inflight_rows_per_partition &&
      *w.max_inflight_rows_per_partition > *w.max_inflight_rows) {
    r.problem_at("writer.max_inflight_rows_per_partition", "(" + std::to_string(*w.max_inflight_rows_per_partition) +
                                                               ") is above writer.max_inflight_rows (" +
                                                               std::to_string(*w.max_inflight_rows) + ")");
  }
  // librdkafka's read-ahead is counted inside max_inflight_bytes: half of it at most, so the events
  // keep the other half.
  if (const auto it = c.kafka.properties.find("queued.max.messages.kbytes"); it != c.kafka.properties.end()) {
    std::uint64_t kbytes = 0;
    const auto& text = it->second;
    const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), kbytes);
    if (ec == std::errc{} && ptr == text.data() + text.size() && kbytes > w.max_inflight_bytes / 2 / 1024) {
      r.problem_at("kafka.properties", "queued.max.messages.kbytes (" + text +
                                           ") is more than half of writer.max_inflight_bytes (" +
                                           format_size(w.max_inflight_bytes) +
                                           "), which holds librdkafka's read-ahead and the events in flight");
    }
  }
  if (w.max_inflight_bytes < w.batch_max_bytes) {
    r.problem_at("writer.max_inflight_bytes", "(" + format_size(w.max_inflight_bytes) +
                                                  ") is below writer.batch_max_bytes (" +
                                                  format_size(w.batch_max_bytes) + ")");
  }
  if (c.query.default_limit > c.query.max_limit) {
    r.problem_at("query.default_limit", "(" + std::to_string(c.query.default_limit) + ") is above query.max_limit (" +
                                            std::to_string(c.query.max_limit) + ")");
  }
  if (c.table.ttl.count() % 1000 != 0) {
    r.problem_at("table.ttl", "HBase family TTLs are whole seconds; got " + format_duration(c.table.ttl));
  }
}

// Over framed transport the gateway drops a request frame above its limit with the connection, and
// the same batch would be dropped on every retry. A batch of several rows holds at most
// batch_max_bytes as the batcher counts them (row key + family + qualifier + value + 8 per cell);
// putMultiple's encoding adds per row the key once, the TPut's field headers, timestamp, TTL
// attribute and durability (under 80 bytes for keys of 14 bytes or more, whose per-cell count
// already covers Thrift's 22 bytes per cell), and per call the method, the table and list headers.
// The sink still splits a call that does not fit (short keys) and dead-letters a row that alone
// does not (thrift2_sink.h): this check keeps that the exception.
void check_frame(const Config& c, Reader& r) {
  if (c.hbase.transport != ThriftTransport::framed) return;
  constexpr std::size_t kPerRowBytes = 80;
  constexpr std::size_t kPerCallBytes = 1024;
  const std::size_t encoding = c.writer.batch_max_rows * kPerRowBytes + kPerCallBytes;
  const std::size_t frame = c.hbase.framed_max_frame_bytes;
  if (c.writer.batch_max_bytes + encoding > frame) {
    // Rounded down to whole KiB, the unit an operator would write.
    const std::string fits = frame > encoding + 1024 ? format_size((frame - encoding) / 1024 * 1024) : "1KiB";
    r.problem_at("writer.batch_max_bytes",
                 "(" + format_size(c.writer.batch_max_bytes) + ") plus the Thrift encoding of writer.batch_max_rows (" +
                     std::to_string(c.writer.batch_max_rows) + ") rows (" + format_size(encoding) +
                     ") is above hbase.framed_max_frame_bytes (" + format_size(frame) +
                     "): the gateway drops larger requests. Lower it to " + fits +
                     " or less, or raise the gateways' frame limit and hbase.framed_max_frame_bytes with it");
  }
}

void check_route_key(const RouteConfig& route, const std::string& path, Reader& r) {
  const int keys = (route.preset ? 1 : 0) + (route.key_file ? 1 : 0) + (route.key_yaml ? 1 : 0);
  // A route whose mapping did not even parse was reported already.
  if (!r.seen(path)) return;
  if (keys != 1) {
    r.problem_at(path, keys == 0 ? "needs a key spec: set one of preset, key_file, key"
                                 : "set only one of preset, key_file, key");
  }
  if (!route.preset_params.empty() && !route.preset) {
    r.problem_at(path + ".preset_params", "only applies together with preset");
  }
}

void check_routes(const Config& c, Reader& r) {
  if (c.routes.empty() && !c.default_route) {
    r.problem_at("routes", "no routes: add at least one route (or a default_route)");
  }
  std::map<std::string, std::size_t> routed;  // event type -> route index
  for (std::size_t i = 0; i < c.routes.size(); ++i) {
    const RouteConfig& route = c.routes[i];
    const std::string path = "routes[" + std::to_string(i) + "]";
    check_route_key(route, path, r);
    if (route.event_types.empty() && r.seen(path)) {
      r.problem_at(path + ".event_types", "a route must name at least one event type (use default_route for the rest)");
    }
    for (const auto& type : route.event_types) {
      const auto [it, inserted] = routed.emplace(type, i);
      if (!inserted) {
        r.problem_at(path + ".event_types",
                     "event type '" + type + "' is already routed by routes[" + std::to_string(it->second) + "]");
      }
    }
  }
  if (c.default_route) {
    check_route_key(*c.default_route, "default_route", r);
    if (!c.default_route->event_types.empty()) {
      r.problem_at("default_route.event_types", "the default route takes every unrouted type; remove event_types");
    }
  }
  if (c.dlq.unknown_type == UnknownType::default_route && !c.default_route) {
    r.problem_at("dlq.unknown_type", "is default_route but no default_route is configured");
  }
  if (c.default_route && c.dlq.unknown_type != UnknownType::default_route) {
    r.problem_at("default_route", "is never used: set dlq.unknown_type: default_route");
  }
}

void check_decode(const Config& c, Reader& r) {
  for (const auto& [topic, format] : c.decode.topic_formats) {
    if (!event_format_named(format)) {
      r.problem_at("decode.topic_formats." + topic,
                   "unknown format '" + format + "': use json, avro, protobuf or json_schema");
    }
  }
  for (const auto& [topic, format] : c.decode.topic_key_formats) {
    if (!key_format_named(format)) {
      r.problem_at("decode.topic_key_formats." + topic,
                   "unknown key format '" + format + "': use bytes, text, json, avro, protobuf or json_schema");
    }
  }
}

// The registry: a URL the HTTP client can use, auth and TLS that fit it, and a URL wherever a
// format reads schemas from it.
void check_schema_registry(const Config& c, Reader& r) {
  const SchemaRegistryConfig& sr = c.schema_registry;
  if (!sr.url) {
    if (c.decode.format != EventFormat::json) {
      r.problem_at("decode.format", "format '" + std::string(event_format_name(c.decode.format)) +
                                        "' reads schemas from a registry: set schema_registry.url");
    }
    for (const auto& [topic, name] : c.decode.topic_formats) {
      const auto format = event_format_named(name);
      if (format && *format != EventFormat::json) {
        r.problem_at("decode.topic_formats." + topic,
                     "format '" + name + "' reads schemas from a registry: set schema_registry.url");
      }
    }
    const auto reads_registry = [](KeyFormat format) {
      const auto decoded = key_event_format(format);
      return decoded && *decoded != EventFormat::json;
    };
    if (reads_registry(c.decode.key_format)) {
      r.problem_at("decode.key_format", "key format '" + std::string(key_format_name(c.decode.key_format)) +
                                            "' reads schemas from a registry: set schema_registry.url");
    }
    for (const auto& [topic, name] : c.decode.topic_key_formats) {
      const auto format = key_format_named(name);
      if (format && reads_registry(*format)) {
        r.problem_at("decode.topic_key_formats." + topic,
                     "key format '" + name + "' reads schemas from a registry: set schema_registry.url");
      }
    }
    if (sr.basic_auth.user || sr.basic_auth.password || sr.tls.ca_file || sr.tls.cert_file || sr.tls.key_file) {
      r.problem_at("schema_registry", "basic_auth and tls are never used without schema_registry.url");
    }
    return;
  }
  const std::string& url = *sr.url;
  const bool https = url.starts_with("https://");
  const std::size_t scheme_end = url.find("://");
  if (!https && !url.starts_with("http://")) {
    r.problem_at("schema_registry.url", "must start with http:// or https://");
  } else {
    const std::string authority = url.substr(scheme_end + 3, url.find('/', scheme_end + 3) - (scheme_end + 3));
    if (authority.find('@') != std::string::npos) {
      // Not quoted: the part before '@' is a password.
      r.problem_at("schema_registry.url",
                   "must not carry credentials (user:password@host): give them as schema_registry.basic_auth");
    } else if (authority.empty()) {
      r.problem_at("schema_registry.url", "'" + url + "' has no host");
    } else if (url.find_first_of("?#") != std::string::npos) {
      // Not quoted: a query is where a token would be.
      r.problem_at("schema_registry.url", "must not have a query or fragment: give the API's base");
    }
  }
  if (sr.basic_auth.user.has_value() != sr.basic_auth.password.has_value()) {
    r.problem_at("schema_registry.basic_auth", "set both user and password, or neither");
  }
  if (!https && (sr.tls.ca_file || sr.tls.cert_file || sr.tls.key_file)) {
    r.problem_at("schema_registry.tls", "the url is http://: TLS settings need an https:// url");
  }
  if (sr.tls.cert_file.has_value() != sr.tls.key_file.has_value()) {
    r.problem_at(sr.tls.cert_file ? "schema_registry.tls.cert_file" : "schema_registry.tls.key_file",
                 "a client certificate needs its key (cert_file and key_file together)");
  }
}

}  // namespace

void sanity_check(const Config& config, Reader& reader) {
  check_decode(config, reader);
  check_kafka(config, reader);
  check_dlq(config, reader);
  check_endpoints(config, reader);
  check_writer(config, reader);
  check_frame(config, reader);
  check_routes(config, reader);
  check_schema_registry(config, reader);
}

}  // namespace hbingest::config::detail
