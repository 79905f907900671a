#include "sections.h"

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>

#include "hbingest/config/group_instance_id.h"
#include "substitution.h"

namespace hbingest::config::detail {

namespace {

using namespace std::chrono_literals;

constexpr std::size_t KiB = 1024;
constexpr std::size_t MiB = 1024 * KiB;
constexpr std::size_t GiB = 1024 * MiB;
constexpr std::int64_t kMillion = 1'000'000;

template <class S, class Member>
Option<Config> section(std::string key, Member Config::*member, const Options<S>& (*options)(),
                       std::string description) {
  Option<Config> o{key, "section", "", std::move(description)};
  o.read = [=](Config& c, const YAML::Node& node, const std::string& path, Reader& r) {
    read_mapping(node, path, options(), c.*member, r);
  };
  o.write = [=](const Config& c) -> std::optional<YAML::Node> { return write_mapping(c.*member, options()); };
  return o;
}

// A section inside a section (hbase.tls), read and written through its own option table.
template <class Parent, class S>
Option<Parent> subsection(std::string key, S Parent::*member, const Options<S>& (*options)(), std::string description) {
  Option<Parent> o{std::move(key), "section", "", std::move(description)};
  o.read = [=](Parent& p, const YAML::Node& node, const std::string& path, Reader& r) {
    read_mapping(node, path, options(), p.*member, r);
  };
  o.write = [=](const Parent& p) -> std::optional<YAML::Node> { return write_mapping(p.*member, options()); };
  return o;
}

// A file the daemon reads at start (a CA bundle, a certificate, a key): relative to the config
// file, and readable now, so that a typo is a config error rather than a failed handshake later.
template <class S>
Option<S> readable_file(std::string key, std::optional<std::filesystem::path> S::*member, std::string description) {
  Option<S> o{std::move(key), "path", "optional; readable file", std::move(description)};
  o.read = [=](S& s, const YAML::Node& node, const std::string& path, Reader& r) {
    if (node.IsNull()) return;
    const auto text = r.scalar(node, path, "a file path");
    if (!text) return;
    if (text->empty()) {
      r.problem(node.Mark(), path, "must not be empty (leave the key out to unset it)");
      return;
    }
    std::filesystem::path file(*text);
    if (file.is_relative()) file = r.base_dir() / file;
    file = file.lexically_normal();
    std::error_code ec;
    if (!std::filesystem::is_regular_file(file, ec)) {
      r.problem(node.Mark(), path, "'" + file.string() + "' is not a readable file");
      return;
    }
    if (std::FILE* f = std::fopen(file.c_str(), "rb")) {
      std::fclose(f);
    } else {
      r.problem(node.Mark(), path, "'" + file.string() + "' cannot be read: " + std::strerror(errno));
      return;
    }
    s.*member = file;
  };
  o.write = [=](const S& s) -> std::optional<YAML::Node> {
    return (s.*member) ? YAML::Node((s.*member)->string()) : YAML::Node(YAML::NodeType::Null);
  };
  return o;
}

// The inline `key:` of a route: kept as YAML text for keyspec, with its location for messages.
Option<RouteConfig> inline_key_option() {
  Option<RouteConfig> o{"key", "mapping", "",
                        "Inline key spec (see docs/keyspec.md). Exactly one of preset, key_file, key."};
  o.read = [](RouteConfig& route, const YAML::Node& node, const std::string& path, Reader& r) {
    if (!node.IsMap()) {
      r.problem(node.Mark(), path, "expected a key spec mapping, got " + std::string(node_kind(node)));
      return;
    }
    route.key_yaml = YAML::Dump(node);
    route.key_source = r.location(node.Mark());
  };
  o.write = [](const RouteConfig& route) -> std::optional<YAML::Node> {
    if (!route.key_yaml) return std::nullopt;
    return YAML::Load(*route.key_yaml);
  };
  return o;
}

Option<RouteConfig> key_file_option() {
  Option<RouteConfig> o{"key_file", "path", "",
                        "Key spec YAML file, relative to this config file. Exactly one of preset, key_file, key."};
  o.read = [](RouteConfig& route, const YAML::Node& node, const std::string& path, Reader& r) {
    const auto text = r.scalar(node, path, "a file path");
    if (!text) return;
    if (text->empty()) {
      r.problem(node.Mark(), path, "must not be empty");
      return;
    }
    std::filesystem::path file(*text);
    if (file.is_relative()) file = r.base_dir() / file;
    route.key_file = file.lexically_normal();
    route.key_source = file.string();
  };
  o.write = [](const RouteConfig& route) -> std::optional<YAML::Node> {
    if (!route.key_file) return std::nullopt;
    return YAML::Node(route.key_file->string());
  };
  return o;
}

Option<RouteConfig> preset_option() {
  Option<RouteConfig> o = optional_string("preset", &RouteConfig::preset,
                                          "Built-in key spec: events, order_status, user_history, timeline, follows, "
                                          "consumption, logs, logs_fixed. Exactly one of preset, key_file, key.");
  auto read_string = o.read;
  o.read = [read_string](RouteConfig& route, const YAML::Node& node, const std::string& path, Reader& r) {
    read_string(route, node, path, r);
    route.key_source = r.location(node.Mark());
  };
  auto write_string = o.write;
  o.write = [write_string](const RouteConfig& route) -> std::optional<YAML::Node> {
    if (!route.preset) return std::nullopt;
    return write_string(route);
  };
  return o;
}

Option<RouteConfig> preset_params_option() {
  Option<RouteConfig> o =
      string_map("preset_params", &RouteConfig::preset_params,
                 "Overrides of the preset's parameters, e.g. {buckets: \"16\", event_field: event_id}.");
  auto write_map = o.write;
  o.write = [write_map](const RouteConfig& route) -> std::optional<YAML::Node> {
    if (!route.preset) return std::nullopt;
    return write_map(route);
  };
  return o;
}

Option<RouteConfig> event_types_option() {
  Option<RouteConfig> o = string_list("event_types", &RouteConfig::event_types,
                                      "Event types (values of decode.event_type_field) sent to this route. "
                                      "Required for routes, not allowed on default_route.");
  auto write_list = o.write;
  o.write = [write_list](const RouteConfig& route) -> std::optional<YAML::Node> {
    if (route.event_types.empty()) return std::nullopt;
    return write_list(route);
  };
  return o;
}

const std::vector<std::pair<std::string, NullFields>> kNullFields = {
    {"skip", NullFields::skip}, {"empty", NullFields::empty}, {"delete_cell", NullFields::delete_cell}};
const std::vector<std::pair<std::string, OnTombstone>> kOnTombstone = {
    {"dlq", OnTombstone::dlq}, {"skip", OnTombstone::skip}, {"delete", OnTombstone::delete_row}};

// True for the template variables of a table name, which are not ${ENV} references.
bool is_table_variable(std::string_view name) {
  return name == "topic" || name == "event_type" || name.starts_with("field:");
}

// `table`: a name or a template. Its ${topic}, ${event_type} and ${field:INPUT} stay as written for
// the route model; any other ${...} is an environment or file reference, substituted as everywhere.
Option<RouteConfig> table_option() {
  Option<RouteConfig> o{"table", "string", "required",
                        "Target table, without namespace; a template may name ${topic}, ${event_type} and "
                        "${field:INPUT} (see table_values, max_tables and docs/rows.md).",
                        true};
  o.read = [](RouteConfig& route, const YAML::Node& node, const std::string& path, Reader& r) {
    route.table_source = r.location(node.Mark());
    if (!node.IsScalar()) {
      r.problem(node.Mark(), path, "expected a table name, got " + std::string(node_kind(node)));
      return;
    }
    const std::string& written = node.Scalar();
    std::string table;
    std::size_t at = 0;
    while (at < written.size()) {
      const std::size_t open = written.find("${", at);
      const std::size_t close = open == std::string::npos ? open : written.find('}', open);
      const bool variable =
          close != std::string::npos && is_table_variable(std::string_view(written).substr(open + 2, close - open - 2));
      const std::size_t end = variable ? open : std::string::npos;
      // The text up to the next template variable goes through the usual substitution.
      const std::string literal = written.substr(at, end == std::string::npos ? std::string::npos : end - at);
      if (!literal.empty()) {
        YAML::Node piece(literal);
        const auto text = r.scalar(piece, path, "a table name");
        if (!text) return;
        table += *text;
      }
      if (!variable) break;
      table += written.substr(open, close + 1 - open);
      at = close + 1;
    }
    if (table.empty()) {
      r.problem(node.Mark(), path, "must not be empty");
      return;
    }
    route.table = std::move(table);
  };
  o.write = [](const RouteConfig& route) -> std::optional<YAML::Node> { return YAML::Node(route.table); };
  return o;
}

Option<RouteConfig> route_name_option() {
  Option<RouteConfig> o = string("name", &RouteConfig::name,
                                 "Name of the route in messages and metrics; unset: routes[i] / default_route.");
  o.write = [](const RouteConfig& route) -> std::optional<YAML::Node> {
    if (route.name.empty()) return std::nullopt;
    return YAML::Node(route.name);
  };
  return o;
}

Option<RouteConfig> table_values_option() {
  Option<RouteConfig> o{"table_values", "mapping", "optional",
                        "For each template variable of `table` whose value comes from the data: the values it may "
                        "take, as a list or as {pattern: REGEX} (whole value). A value outside is invalid (reason "
                        "table_not_allowed). ${event_type} defaults to the route's event_types, ${topic} to its "
                        "topics (or kafka.topics)."};
  o.read = [](RouteConfig& route, const YAML::Node& node, const std::string& path, Reader& r) {
    if (node.IsNull()) return;
    if (!node.IsMap()) {
      r.problem(node.Mark(), path, "expected a mapping of template variables, got " + std::string(node_kind(node)));
      return;
    }
    for (const auto& entry : node) {
      const std::string variable = entry.first.Scalar();
      const std::string item_path = path + "." + variable;
      if (!is_table_variable(variable)) {
        r.problem(entry.first.Mark(), item_path, "is not a template variable (topic, event_type, field:INPUT)");
        continue;
      }
      TableValuesConfig values;
      const YAML::Node& value = entry.second;
      if (value.IsSequence()) {
        for (std::size_t i = 0; i < value.size(); ++i) {
          const auto text = r.scalar(value[i], item_path + "[" + std::to_string(i) + "]", "a string");
          if (text) values.values.push_back(*text);
        }
      } else if (value.IsMap() && value["pattern"] && value.size() == 1) {
        const auto text = r.scalar(value["pattern"], item_path + ".pattern", "a regular expression");
        if (text) values.pattern = *text;
      } else {
        r.problem(value.Mark(), item_path, "expected a list of values or {pattern: REGEX}");
        continue;
      }
      route.table_values[variable] = std::move(values);
    }
  };
  o.write = [](const RouteConfig& route) -> std::optional<YAML::Node> {
    if (route.table_values.empty()) return std::nullopt;
    YAML::Node map(YAML::NodeType::Map);
    for (const auto& [variable, values] : route.table_values) {
      if (values.pattern) {
        map[variable]["pattern"] = *values.pattern;
      } else {
        YAML::Node list(YAML::NodeType::Sequence);
        for (const auto& v : values.values) list.push_back(v);
        map[variable] = list;
      }
    }
    return map;
  };
  return o;
}

// `columns`: the row mapping, a list of {from, to, type, exclude}.
Option<RouteConfig> columns_option() {
  Option<RouteConfig> o{"columns", "list of mappings", "optional",
                        "The row mapping: each entry {from: INPUT or \"*\", to: \"family:qualifier\" or "
                        "\"family:*\", type: text|string|long|int|short|double|float|boolean|bigdecimal|bytes, "
                        "exclude: [names]}. Unset: decode.columns in decode.family, as text (docs/rows.md)."};
  o.read = [](RouteConfig& route, const YAML::Node& node, const std::string& path, Reader& r) {
    if (node.IsNull()) return;
    if (!node.IsSequence()) {
      r.problem(node.Mark(), path, "expected a sequence of column mappings, got " + std::string(node_kind(node)));
      return;
    }
    std::vector<ColumnConfig> columns;
    for (std::size_t i = 0; i < node.size(); ++i) {
      const std::string item_path = path + "[" + std::to_string(i) + "]";
      ColumnConfig column;
      column.source = r.location(node[i].Mark());
      read_mapping(node[i], item_path, column_options(), column, r);
      columns.push_back(std::move(column));
    }
    if (columns.empty()) r.problem(node.Mark(), path, "must list at least one column (leave it out for the default)");
    route.columns = std::move(columns);
  };
  o.write = [](const RouteConfig& route) -> std::optional<YAML::Node> {
    if (!route.columns) return std::nullopt;
    YAML::Node list(YAML::NodeType::Sequence);
    for (const auto& column : *route.columns) list.push_back(write_mapping(column, column_options()));
    return list;
  };
  return o;
}

Option<RouteConfig> format_option() {
  Option<RouteConfig> o = optional_string("format", &RouteConfig::format,
                                          "Input format of this route's topics (json, avro, protobuf, json_schema); "
                                          "needs topics. Unset: decode.format / decode.topic_formats.");
  auto read_string = o.read;
  o.read = [read_string](RouteConfig& route, const YAML::Node& node, const std::string& path, Reader& r) {
    read_string(route, node, path, r);
    if (route.format && !event_format_named(*route.format)) {
      r.problem(node.Mark(), path, "'" + *route.format + "' is not one of json, avro, protobuf, json_schema");
      route.format.reset();
    }
  };
  return o;
}

Option<HttpConfig> bearer_token_option() {
  Option<HttpConfig> o{"bearer_token", "secret string", "must be ${ENV} or ${file:PATH}",
                       "Token clients must send as 'Authorization: Bearer ...'. Unset: no authentication. "
                       "Only as a ${...} reference, or use token_file / token_env."};
  o.read = [](HttpConfig& http, const YAML::Node& node, const std::string& path, Reader& r) {
    if (node.IsNull()) return;  // "~": no authentication, as --print-effective shows it
    if (node.IsScalar() && !has_reference(node.Scalar())) {
      r.problem(node.Mark(), path,
                "a literal token in the config file is not allowed; write ${ENV_VAR} or ${file:PATH}, "
                "or use http.token_file / http.token_env");
      return;
    }
    const auto text = r.scalar(node, path, "a ${...} reference");
    if (!text) return;
    if (text->empty()) {
      r.problem(node.Mark(), path, "resolves to an empty token");
      return;
    }
    http.bearer_token = *text;
  };
  o.write = [](const HttpConfig& http) -> std::optional<YAML::Node> {
    return http.bearer_token ? YAML::Node(kRedacted) : YAML::Node(YAML::NodeType::Null);
  };
  return o;
}

Option<HttpConfig> token_file_option() {
  Option<HttpConfig> o{"token_file", "path", "", "File holding the bearer token (one trailing newline ignored)."};
  o.read = [](HttpConfig& http, const YAML::Node& node, const std::string& path, Reader& r) {
    const auto text = r.scalar(node, path, "a file path");
    if (!text) return;
    try {
      const std::string token = read_secret_file(*text, r.base_dir());
      if (token.empty()) {
        r.problem(node.Mark(), path, "file '" + *text + "' is empty");
        return;
      }
      r.add_secret(token, path);
      http.bearer_token = token;
    } catch (const SubstitutionError& e) {
      r.problem(node.Mark(), path, e.what());
    }
  };
  return o;  // no writer: the effective config shows the resolved (redacted) bearer_token
}

Option<HttpConfig> token_env_option() {
  Option<HttpConfig> o{"token_env", "string", "", "Environment variable holding the bearer token."};
  o.read = [](HttpConfig& http, const YAML::Node& node, const std::string& path, Reader& r) {
    const auto name = r.scalar(node, path, "an environment variable name");
    if (!name) return;
    const char* value = std::getenv(name->c_str());
    if (value == nullptr || *value == '\0') {
      r.problem(node.Mark(), path, "environment variable '" + *name + "' is not set or empty");
      return;
    }
    r.add_secret(value, path);
    http.bearer_token = value;
  };
  return o;
}

void read_route(RouteConfig& route, const YAML::Node& node, const std::string& path, Reader& r) {
  read_mapping(node, path, route_options(), route, r);
}

Option<Config> routes_option() {
  Option<Config> o{"routes", "list of routes", "", "Which event types go to which table with which key spec."};
  o.read = [](Config& c, const YAML::Node& node, const std::string& path, Reader& r) {
    if (!node.IsSequence()) {
      r.problem(node.Mark(), path, "expected a sequence of routes, got " + std::string(node_kind(node)));
      return;
    }
    for (std::size_t i = 0; i < node.size(); ++i) {
      const std::string route_path = path + "[" + std::to_string(i) + "]";
      // Remembered only when it is a mapping: the cross-field checks skip routes already reported.
      if (node[i].IsMap()) r.remember(route_path, node[i].Mark());
      RouteConfig route;
      read_route(route, node[i], route_path, r);
      c.routes.push_back(std::move(route));
    }
  };
  o.write = [](const Config& c) -> std::optional<YAML::Node> {
    YAML::Node list(YAML::NodeType::Sequence);
    for (const auto& route : c.routes) list.push_back(write_mapping(route, route_options()));
    return list;
  };
  return o;
}

Option<Config> default_route_option() {
  Option<Config> o{"default_route", "route", "optional",
                   "Where events of unrouted types go when dlq.unknown_type is default_route (no event_types)."};
  o.read = [](Config& c, const YAML::Node& node, const std::string& path, Reader& r) {
    if (node.IsNull()) return;
    RouteConfig route;
    read_route(route, node, path, r);
    if (node.IsMap()) c.default_route = std::move(route);
  };
  o.write = [](const Config& c) -> std::optional<YAML::Node> {
    if (!c.default_route) return YAML::Node(YAML::NodeType::Null);
    return write_mapping(*c.default_route, route_options());
  };
  return o;
}

}  // namespace

const std::vector<std::string>& durability_names() {
  static const std::vector<std::string> names = {"USE_DEFAULT", "SKIP_WAL", "ASYNC_WAL", "SYNC_WAL", "FSYNC_WAL"};
  return names;
}

const std::vector<std::string>& log_level_names() {
  static const std::vector<std::string> names = {"trace", "debug", "info", "warn", "error", "critical", "off"};
  return names;
}

// kafka.group_instance_id: may be empty (off), unlike the other strings; an id given verbatim is
// held to Kafka's rule here, "auto" once the host name is known (sanity_check.cpp).
Option<KafkaConfig> group_instance_id_option() {
  Option<KafkaConfig> o{
      "group_instance_id", "string", "\"\" (off), auto, or an id: ASCII letters, digits, . _ -, at most 249",
      "Static group membership (Kafka's group.instance.id): a restarted member gets its partitions back at once "
      "instead of after a rebalance, and a member gone stays in the group, its partitions idle, until "
      "session.timeout.ms. \"auto\" takes the host name (in a Kubernetes StatefulSet the stable pod name; refused "
      "for a Deployment pod's generated name). Every live member needs its own id: a second daemon with the same "
      "id fences the first, which stops with exit status 1. Empty: off."};
  o.read = [](KafkaConfig& k, const YAML::Node& node, const std::string& path, Reader& r) {
    if (node.IsNull()) return;
    const auto text = r.scalar(node, path, "a string");
    if (!text) return;
    if (!text->empty() && *text != kGroupInstanceIdAuto) {
      if (const auto problem = group_instance_id_problem(*text)) {
        r.problem(node.Mark(), path, r.shown(path, *text) + " " + *problem);
        return;
      }
    }
    k.group_instance_id = *text;
  };
  o.write = [](const KafkaConfig& k) -> std::optional<YAML::Node> { return YAML::Node(k.group_instance_id); };
  return o;
}

const Options<KafkaConfig>& kafka_options() {
  using K = KafkaConfig;
  static const Options<K> options = {
      string("bootstrap_servers", &K::bootstrap_servers, "Kafka bootstrap servers, comma-separated host:port.", {},
             true),
      string("group_id", &K::group_id, "Consumer group; scale out by running more instances with the same group."),
      group_instance_id_option(),
      string_list("topics", &K::topics, "Topics to consume: literal names, or one \"^regex\" (librdkafka syntax).",
                  true),
      string_map("properties", &K::properties,
                 "librdkafka properties passed verbatim (security.protocol, ssl.*, sasl.*, fetch sizes...). "
                 "enable.auto.commit, enable.auto.offset.store and group.instance.id are managed by hbingest and "
                 "rejected."),
      duration("commit_interval", &K::commit_interval, 10ms, 1h,
               "How often acknowledged offsets are committed (only offsets whose rows HBase acknowledged)."),
      integer("poll_batch", &K::poll_batch, 1, kMillion, "Messages taken per poll."),
      duration("statistics_interval", &K::statistics_interval, 0ms, 1h,
               "librdkafka statistics interval feeding the lag metrics; 0 disables them."),
      duration("startup_check_timeout", &K::startup_check_timeout, 0ms, 10min,
               "At start, the consumer and the dead-letter producer each wait up to this long for a broker to "
               "answer (TLS handshake and SASL login included). A TLS or SASL failure (wrong CA, expired or refused "
               "certificate, wrong password) stops the start with that cause, exit status 1; no answer at all only "
               "logs a warning (the broker may come later; the producer then does not wait again). 0 skips "
               "the check."),
  };
  return options;
}

const Options<HBaseConfig>& hbase_options() {
  using H = HBaseConfig;
  static const Options<H> options = {
      string_list("endpoints", &H::endpoints,
                  "Thrift2 gateways as host:port; writers spread over them and fail over on errors.", true),
      enumeration("transport", &H::transport,
                  {{"framed", ThriftTransport::framed}, {"buffered", ThriftTransport::buffered}},
                  "Thrift transport; must match hbase.regionserver.thrift.framed on the server. HBase 2.6 cannot "
                  "pre-split tables (bootstrap) over framed."),
      enumeration("protocol", &H::protocol, {{"binary", ThriftProtocol::binary}, {"compact", ThriftProtocol::compact}},
                  "Thrift protocol; must match hbase.regionserver.thrift.compact on the server."),
      duration("connect_timeout", &H::connect_timeout, 1ms, 10min, "TCP connect timeout per endpoint."),
      duration("read_timeout", &H::read_timeout, 1ms, 1h, "Socket read timeout for one Thrift call."),
      size("framed_max_frame_bytes", &H::framed_max_frame_bytes, 64 * KiB, 1 * GiB,
           "With transport framed: the largest request the gateways read, their "
           "hbase.regionserver.thrift.framed.max_frame_size_in_mb (HBase's default is 2 MiB); a larger request is "
           "dropped with its connection. check-config keeps writer batches below it; a larger write is split, and "
           "a single row above it is dead-lettered. Not used with buffered."),
      string("namespace", &H::ns, "HBase namespace of the tables."),
      subsection("tls", &H::tls, &hbase_tls_options, "TLS to the Thrift2 gateways (see hbase.tls.*)."),
      subsection("sasl", &H::sasl, &hbase_sasl_options,
                 "Kerberos (SASL GSSAPI) to the Thrift2 gateways of a secured cluster (see hbase.sasl.*)."),
  };
  return options;
}

const Options<HBaseTlsConfig>& hbase_tls_options() {
  using T = HBaseTlsConfig;
  static const Options<T> options = {
      boolean("enabled", &T::enabled,
              "Connect to every endpoint over TLS (writers, queries, admin). HBase 2.6's Thrift2 server has no TLS "
              "for the binary protocol: put a TLS terminator (stunnel) in front of it, see docs/operations.md."),
      readable_file("ca_file", &T::ca_file,
                    "PEM file of the CA(s) the gateway's certificate must chain to. Required when enabled."),
      readable_file("cert_file", &T::cert_file,
                    "PEM client certificate, for a terminator that requires one (with key_file)."),
      readable_file("key_file", &T::key_file, "PEM private key of cert_file."),
      boolean("verify_hostname", &T::verify_hostname,
              "The gateway's certificate must name the endpoint's host (a DNS name in subjectAltName or CN, or an "
              "IP address in subjectAltName). Turn off only to diagnose."),
  };
  return options;
}

const Options<HBaseSaslConfig>& hbase_sasl_options() {
  using S = HBaseSaslConfig;
  static const Options<S> options = {
      enumeration("mechanism", &S::mechanism, {{"none", SaslMechanism::none}, {"GSSAPI", SaslMechanism::gssapi}},
                  "GSSAPI: every connection to an endpoint (writers, queries, admin, bootstrap) starts with a SASL "
                  "GSSAPI handshake, as the gateway of a kerberized HBase requires (hbase.thrift.security.qop set). "
                  "none: plain Thrift."),
      string("service", &S::service,
             "First component of the gateways' Kerberos principal (hbase.thrift.kerberos.principal "
             "service/host@REALM)."),
      optional_string("principal", &S::principal,
                      "hbingest's own Kerberos principal (user@REALM or service/host@REALM), logged in from keytab. "
                      "Required with GSSAPI."),
      readable_file("keytab", &S::keytab,
                    "Keytab holding the key of principal. Required with GSSAPI. Keep it readable by hbingest only."),
      enumeration("qop", &S::qop,
                  {{"authentication", SaslQop::authentication},
                   {"integrity", SaslQop::integrity},
                   {"privacy", SaslQop::privacy},
                   {"auth", SaslQop::authentication},
                   {"auth-int", SaslQop::integrity},
                   {"auth-conf", SaslQop::privacy}},
                  "Protection after the handshake; must equal the gateways' hbase.thrift.security.qop (HBase's names "
                  "auth, auth-int, auth-conf are accepted too): privacy encrypts every frame (no TLS terminator "
                  "needed), integrity signs them, authentication only proves who connects. A gateway that offers "
                  "another is refused at the handshake, naming both."),
      string("server_principal_host", &S::server_principal_host,
             "Host component of the gateways' principal. _HOST: each endpoint's host as written in "
             "hbase.endpoints, never resolved through DNS (write the names the principals carry); a name: "
             "the same for every endpoint (one principal behind a load balancer)."),
  };
  return options;
}

const Options<WriterConfig>& writer_options() {
  using W = WriterConfig;
  static const Options<W> options = {
      integer("writers", &W::writers, 1, 256,
              "The most writer threads, each with its own Thrift connection and one batch in flight: how many "
              "batches are sent at once is found from batch latency and acknowledged rows/s, up to this "
              "(hbingest_writer_inflight_batches_limit)."),
      integer("batch_max_rows", &W::batch_max_rows, 1, kMillion, "A batch is sent when it holds this many rows..."),
      size("batch_max_bytes", &W::batch_max_bytes, 1 * KiB, 1 * GiB,
           "...or this many bytes (like hbase.client.write.buffer)..."),
      duration("linger", &W::linger, 0ms, 1min, "...or when its oldest row has waited this long."),
      string("durability", &W::durability, "WAL durability of each put.", durability_names()),
      duration("retry_initial_backoff", &W::retry_initial_backoff, 1ms, 1min,
               "First retry delay of a failed batch; doubles per retry."),
      duration("retry_max_backoff", &W::retry_max_backoff, 1ms, 1h, "Upper bound of the retry delay."),
      integer_or_auto("max_inflight_rows", &W::max_inflight_rows, 1, 1000 * kMillion,
                      "Offsets in flight: events not yet stored or dead-lettered, plus completed ones kept behind "
                      "the oldest of them; consumption pauses above it (backpressure). auto: derived from the "
                      "writers' flow (the batches at the gateways, as many ready, half a second of the "
                      "acknowledged rows/s; hbingest_inflight_rows_limit); a number caps what is derived."),
      size("max_inflight_bytes", &W::max_inflight_bytes, 1 * KiB, 64 * GiB,
           "Memory held by events in flight (the Kafka message plus its decoded row, as allocated) and by "
           "librdkafka's read-ahead, which takes an eighth of it (1 MiB to 64 MiB) unless kafka.properties sets "
           "queued.max.messages.kbytes (at most half of it); consumption pauses above it."),
      integer_or_auto("max_inflight_rows_per_partition", &W::max_inflight_rows_per_partition, 1, 1000 * kMillion,
                      "Offsets in flight per Kafka partition (counted like max_inflight_rows: one event stuck "
                      "holds the later completed ones); that partition pauses above it. auto: the derived "
                      "max_inflight_rows; a number caps it."),
  };
  return options;
}

const Options<DecodeConfig>& decode_options() {
  using D = DecodeConfig;
  static const Options<D> options = {
      enumeration("format", &D::format,
                  {{"json", EventFormat::json},
                   {"avro", EventFormat::avro},
                   {"protobuf", EventFormat::protobuf},
                   {"json_schema", EventFormat::json_schema}},
                  "How message values are written: JSON text, or Avro, Protobuf or JSON Schema in the Confluent "
                  "wire format (magic byte 0, schema id) with schemas from schema_registry."),
      string_map("topic_formats", &D::topic_formats,
                 "Per-topic exceptions to format: topic name → json, avro, protobuf or json_schema."),
      enumeration("key_format", &D::key_format,
                  {{"bytes", KeyFormat::bytes},
                   {"text", KeyFormat::text},
                   {"json", KeyFormat::json},
                   {"avro", KeyFormat::avro},
                   {"protobuf", KeyFormat::protobuf},
                   {"json_schema", KeyFormat::json_schema}},
                  "How message keys are read where a route names key or key.<path>: text (the key's bytes as a "
                  "string), bytes (the same bytes, written as bytes), json, or avro, protobuf or json_schema in "
                  "the Confluent wire format with the key schema (subject <topic>-key) from schema_registry. A key "
                  "that does not decode makes its event invalid (reason invalid_key)."),
      string_map("topic_key_formats", &D::topic_key_formats,
                 "Per-topic exceptions to key_format: topic name → bytes, text, json, avro, protobuf or json_schema."),
      string("event_type_field", &D::event_type_field, "JSON field naming the event type (routes match on it)."),
      string("time_field", &D::time_field, "JSON field holding the event time."),
      enumeration("time_format", &D::time_format,
                  {{"auto", TimeFormat::auto_detect},
                   {"epoch_ms", TimeFormat::epoch_ms},
                   {"epoch_s", TimeFormat::epoch_s},
                   {"rfc3339", TimeFormat::rfc3339}},
                  "How the time field is written; auto tells epoch s/ms by magnitude and accepts RFC 3339 strings."),
      boolean("kafka_time_fallback", &D::kafka_time_fallback,
              "Use the Kafka message timestamp when the time field is missing."),
      enumeration("columns", &D::columns,
                  {{"fields", ColumnsMode::fields}, {"raw", ColumnsMode::raw}, {"both", ColumnsMode::both}},
                  "fields: one cell per top-level JSON field; raw: the whole event in one cell; both."),
      string("family", &D::family, "Column family of the cells; keep it short, it is stored in every cell."),
      string("raw_qualifier", &D::raw_qualifier, "Qualifier of the raw-event cell (columns raw/both)."),
      boolean("write_null_fields", &D::write_null_fields,
              "Write an empty cell for a JSON null (else skip the field); null_fields: empty says the same."),
      optional_enumeration("null_fields", &D::null_fields, kNullFields,
                           "What a null field writes: skip, empty (an empty cell), delete_cell (deletes the column up "
                           "to the event time). Unset: empty when write_null_fields, else skip. Routes may override."),
      enumeration("on_tombstone", &D::on_tombstone, kOnTombstone,
                  "What a tombstone (a record with a null value) does: dlq (reason tombstone), skip, or delete "
                  "(its row in every route taking its topic; the key spec must not read the value)."),
      size("max_event_bytes", &D::max_event_bytes, 1, 64 * MiB,
           "Larger messages (value, key and headers together) are invalid (see dlq.on_invalid)."),
      optional_string("ttl_field", &D::ttl_field,
                      "JSON field with a per-event TTL in ms; may shorten table.ttl, never lengthen it."),
      enumeration("cell_timestamp", &D::cell_timestamp,
                  {{"event_time", CellTimestamp::event_time}, {"ingest_time", CellTimestamp::ingest_time}},
                  "HBase cell timestamp; TTL expiry counts from it."),
      duration("max_future_skew", &D::max_future_skew, 1s, 24h * 365,
               "Events whose cell timestamp is further ahead of the clock are invalid (reason future_time, see "
               "dlq.on_invalid): their rows would outlive table.ttl by as much."),
  };
  return options;
}

const Options<SchemaRegistryConfig>& schema_registry_options() {
  using S = SchemaRegistryConfig;
  static const Options<S> options = {
      optional_string(
          "url", &S::url,
          "Base URL of the registry's Confluent REST API, http:// or https:// (Confluent: "
          "https://host:8081; Apicurio 2.x: http://host:8080/apis/ccompat/v7), without credentials. "
          "Required when decode.format, decode.key_format or a decode.topic_formats or decode.topic_key_formats value "
          "is avro, protobuf or json_schema."),
      subsection("basic_auth", &S::basic_auth, &schema_registry_basic_auth_options,
                 "HTTP basic authentication (see schema_registry.basic_auth.*)."),
      subsection("tls", &S::tls, &schema_registry_tls_options,
                 "TLS to an https:// registry (see schema_registry.tls.*)."),
      duration("timeout", &S::timeout, 10ms, 10min,
               "Bounds connecting, each read and a whole answer. A registry that does not answer in time is "
               "unavailable: events with schemas already fetched keep flowing, the others wait."),
      integer("cache_max_schemas", &S::cache_max_schemas, 1, 10 * kMillion,
              "Parsed schemas kept by id (ids never change, so a kept one is never fetched again)."),
      size("cache_max_bytes", &S::cache_max_bytes, 64 * KiB, 64 * GiB,
           "Bytes the kept schemas may hold (their text and parsed form); the least recently used go first."),
  };
  return options;
}

const Options<SchemaRegistryBasicAuthConfig>& schema_registry_basic_auth_options() {
  using B = SchemaRegistryBasicAuthConfig;
  static const Options<B> options = {
      optional_string("user", &B::user, "User name (with password)."),
      optional_string("password", &B::password,
                      "Password (with user); a secret, best given as ${file:PATH} or ${ENV_VAR}. Never printed."),
  };
  return options;
}

const Options<SchemaRegistryTlsConfig>& schema_registry_tls_options() {
  using T = SchemaRegistryTlsConfig;
  static const Options<T> options = {
      readable_file("ca_file", &T::ca_file,
                    "PEM file of the CA(s) the registry's certificate must chain to; unset: the system's CAs. "
                    "The certificate must name the url's host."),
      readable_file("cert_file", &T::cert_file,
                    "PEM client certificate, for a registry that requires one (with key_file)."),
      readable_file("key_file", &T::key_file, "PEM private key of cert_file."),
  };
  return options;
}

const Options<RouteConfig>& route_options() {
  using R = RouteConfig;
  static const Options<R> options = {
      route_name_option(),
      string_list("topics", &R::topics,
                  "Topics this route takes records from; unset: every subscribed topic. A tombstone is routed by "
                  "its topic alone."),
      event_types_option(),
      table_option(),
      table_values_option(),
      integer("max_tables", &R::max_tables, 1, 10000,
              "Distinct tables a template may produce; an event that would make one more is invalid (reason "
              "table_not_allowed)."),
      format_option(),
      columns_option(),
      optional_enumeration("null_fields", &R::null_fields, kNullFields,
                           "What a null field writes: skip (nothing), empty (an empty cell), delete_cell (deletes the "
                           "column up to the event time). Unset: decode.null_fields."),
      optional_enumeration("on_tombstone", &R::on_tombstone, kOnTombstone,
                           "What a tombstone (null value) on this route's topics does; unset: decode.on_tombstone."),
      preset_option(),
      preset_params_option(),
      key_file_option(),
      inline_key_option(),
  };
  return options;
}

const Options<ColumnConfig>& column_options() {
  using C = ColumnConfig;
  static const Options<C> options = {
      string("from", &C::from,
             "An input: a value path (user_id, payment.amount, items[0].sku), key, key.PATH, header:NAME, "
             "kafka:topic|partition|offset|timestamp|key|value; or \"*\" for every top-level field.",
             {}, true),
      string("to", &C::to, "family:qualifier, or family:* to name each cell after its member.", {}, true),
      string("type", &C::type, "How the value is written (docs/rows.md, \"Typed values\").",
             {"text", "string", "long", "int", "short", "double", "float", "boolean", "bigdecimal", "bytes"}),
      string_list("exclude", &C::exclude, "Members left out (with \"*\" or a record)."),
  };
  return options;
}

const Options<TableConfig>& table_options() {
  using T = TableConfig;
  static const Options<T> options = {
      duration("ttl", &T::ttl, 1s, 24h * 3650,
               "Row lifetime: the family TTL at bootstrap and the per-put TTL (whole seconds)."),
      boolean("create_table", &T::create_table,
              "Create missing tables at start, like `hbingest bootstrap`, and those a table template makes at run "
              "time when first seen."),
      duration("check_interval", &T::check_interval, 1s, 1h,
               "How often `run` checks that every route table exists, is enabled and has the family "
               "(also at once after a failed write, and every 2s while one is not): writes to such a "
               "table are held, hbingest_table_available and /readyz say why."),
      string("bloom_filter", &T::bloom_filter, "Bloom filter of created tables.", {"NONE", "ROW", "ROWCOL"}),
      string("compression", &T::compression, "Compression of created tables.",
             {"NONE", "SNAPPY", "LZ4", "GZ", "ZSTD", "LZO", "BZIP2"}),
  };
  return options;
}

const Options<DlqConfig>& dlq_options() {
  using Q = DlqConfig;
  static const Options<Q> options = {
      string("topic", &Q::topic, "Dead-letter topic for invalid or unroutable events (with the reason in headers)."),
      enumeration(
          "on_invalid", &Q::on_invalid, {{"dlq", OnInvalid::dlq}, {"skip", OnInvalid::skip}, {"fail", OnInvalid::fail}},
          "Undecodable event or key: send to the DLQ, skip it (counted), or stop the daemon. A row "
          "HBase refuses for good is never skipped: it goes to the DLQ (skip, dlq) or stops the daemon (fail)."),
      enumeration(
          "unknown_type", &Q::unknown_type,
          {{"dlq", UnknownType::dlq}, {"default_route", UnknownType::default_route}, {"skip", UnknownType::skip}},
          "Event type no route names: DLQ, default_route, or skip (counted)."),
      size("max_letter_bytes", &Q::max_letter_bytes, 4 * KiB, 10 * MiB,
           "Largest dead letter (key + payload + headers). A longer payload is cut to fit, with headers "
           "__hbingest.truncated, __hbingest.original.size and __hbingest.original.sha256; the original stays in its "
           "topic. At most the producer's message.max.bytes (dlq.properties, 10MiB by default); the default passes "
           "a broker's default message.max.bytes (1 MB)."),
      string_map("properties", &Q::properties, "Extra librdkafka producer properties for the DLQ producer."),
  };
  return options;
}

const Options<HttpConfig>& http_options() {
  using H = HttpConfig;
  static const Options<H> options = {
      boolean("enabled", &H::enabled, "Serve /metrics, /healthz, /readyz and the query API."),
      string("listen", &H::listen,
             "Listen address host:port (port 0 picks a free port). A non-loopback address needs a bearer "
             "token, or allow_unauthenticated: true."),
      optional_string(
          "health_listen", &H::health_listen,
          "Second listener serving only /healthz, /readyz and /metrics, with its own workers, so probes and "
          "scrapes answer while the query port is saturated or attacked. Unset: none (they stay on listen too)."),
      bearer_token_option(),
      token_file_option(),
      token_env_option(),
      boolean("metrics_auth", &H::metrics_auth,
              "/metrics needs the bearer token too (Prometheus: authorization in the scrape config). "
              "/healthz and /readyz never do: kubelet probes send no token."),
      boolean("allow_unauthenticated", &H::allow_unauthenticated,
              "Allow listen on a non-loopback address without a bearer token (anyone reaching the port can "
              "query). Without it such a config is refused."),
      integer("max_concurrent_queries", &H::max_concurrent_queries, 1, 1024,
              "Queries served at once; up to half as many more wait up to 1 s each for a query to end, then get "
              "429 (Retry-After: 1); beyond those, 429 at once."),
      integer("workers", &H::workers, 1, 1024,
              "Connections served at once per listener, one thread each for the connection's life (idle keep-alive "
              "included)."),
      integer("max_queued_connections", &H::max_queued_connections, 0, 65536,
              "Accepted connections waiting for a worker; more get 503 (Retry-After: 1) and are closed at once. "
              "With workers, the bound on the port's sockets."),
      integer("max_connections_per_client", &H::max_connections_per_client, 0, 65536 + 1024,
              "Connections one client address (an IPv6 /64) may hold, served or queued; more get 503 at once "
              "(Retry-After: 1), so one client cannot take every worker and queue slot. 0: half of workers (at least "
              "1). A connection over the cap waits up to 200 ms, on no worker, for one of its client's to end. Behind "
              "a proxy every client has the proxy's address: raise it to workers + "
              "max_queued_connections there, and let the proxy limit its clients."),
      size("max_header_bytes", &H::max_header_bytes, 1 * KiB, 1 * MiB,
           "Request line plus headers; a longer head gets 400 (or the connection closed) and is never buffered."),
      duration("header_timeout", &H::header_timeout, 100ms, 5min,
               "Time for a whole request head to arrive, counted from the connection (first request) or its first "
               "byte; the connection is closed after it (slow or silent clients)."),
      duration("keep_alive_timeout", &H::keep_alive_timeout, 100ms, 5min,
               "An idle keep-alive connection is closed after this."),
      integer("keep_alive_max_requests", &H::keep_alive_max_requests, 1, 100000,
              "Requests on one connection before it is closed."),
      duration("write_timeout", &H::write_timeout, 100ms, 1h,
               "Time to write one whole response from its first byte; a client reading slower is disconnected."),
      size("max_response_bytes", &H::max_response_bytes, 4 * KiB, 4 * GiB,
           "Largest /v1/events body: at this size the query stops and the body ends with a truncation marker "
           "(JSON \"truncated_by\":\"max_response_bytes\", NDJSON a last marker line)."),
      optional_string("tls_cert_file", &H::tls_cert_file,
                      "PEM certificate chain for HTTPS on every HTTP listener (with tls_key_file). Re-read on SIGHUP."),
      optional_string("tls_key_file", &H::tls_key_file, "PEM private key of tls_cert_file. Re-read on SIGHUP."),
  };
  return options;
}

const Options<QueryConfig>& query_options() {
  using Q = QueryConfig;
  static const Options<Q> options = {
      integer("concurrency", &Q::concurrency, 1, 1024,
              "Scans in flight per query (one per salt bucket, at most this)."),
      integer("chunk_rows", &Q::chunk_rows, 1, 100000, "Rows fetched per scanner call."),
      integer("prefetch_chunks", &Q::prefetch_chunks, 1, 64, "Chunks buffered ahead per scan."),
      duration("deadline", &Q::deadline, 1ms, 10min, "A query not done by then fails with a timeout."),
      integer("max_limit", &Q::max_limit, 1, 10 * kMillion,
              "Largest row limit a query may ask for (/v1/events and hbingest query)."),
      integer("default_limit", &Q::default_limit, 1, 10 * kMillion,
              "Row limit when the query names none (a full-table export of hbingest query has none)."),
  };
  return options;
}

const Options<LoggingConfig>& logging_options() {
  using L = LoggingConfig;
  static const Options<L> options = {
      string("level", &L::level, "Log level; SIGHUP re-reads it from the file.", log_level_names()),
      enumeration("format", &L::format, {{"text", LogFormat::text}, {"json", LogFormat::json}},
                  "text for terminals and journald, json for log shippers (one object per line). Libraries log through "
                  "it too (librdkafka, Thrift's socket messages)."),
  };
  return options;
}

const Options<Config>& config_options() {
  static const Options<Config> options = [] {
    Options<Config> o = {
        section("kafka", &Config::kafka, &kafka_options, "Kafka consumer."),
        section("hbase", &Config::hbase, &hbase_options, "HBase Thrift2 gateways."),
        section("writer", &Config::writer, &writer_options, "Batching, retries and backpressure."),
        section("decode", &Config::decode, &decode_options, "Turning JSON events into cells."),
        section("schema_registry", &Config::schema_registry, &schema_registry_options,
                "The schema registry of the avro, protobuf and json_schema formats."),
        routes_option(),
        default_route_option(),
        section("table", &Config::table, &table_options, "Table settings shared by all routes."),
        section("dlq", &Config::dlq, &dlq_options, "Dead-letter queue."),
        section("http", &Config::http, &http_options, "HTTP server: metrics, health, queries."),
        section("query", &Config::query, &query_options, "The parallel n-way scan reader."),
        section("logging", &Config::logging, &logging_options, "Logs (to stderr)."),
        duration("shutdown_deadline", &Config::shutdown_deadline, 1s, 1h,
                 "The whole shutdown on SIGTERM (or after a fatal error): flush and wait for writes and dead "
                 "letters (the first three quarters, at most all but 10 s), the final synchronous commit, leaving "
                 "the consumer group and the dead-letter flush all fit in it. The daemon exits by itself (status "
                 "1, logged) 5 s after it at the latest, so keep `TimeoutStopSec` / "
                 "`terminationGracePeriodSeconds` above it + 5 s."),
    };
    o[0].required = true;  // kafka
    o[1].required = true;  // hbase
    return o;
  }();
  return options;
}

}  // namespace hbingest::config::detail
