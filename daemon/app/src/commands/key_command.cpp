// hbingest key build|explain|plan: the key spec made visible, byte for byte.

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "hbingest/app/command_line.h"
#include "hbingest/app/commands.h"
#include "hbingest/config/loader.h"
#include "hbingest/connectors/http_schema_registry.h"
#include "hbingest/event_formats/event_decoder.h"
#include "hbingest/event_formats/format_factory.h"
#include "hbingest/keyspec/key_spec.h"
#include "hbingest/keyspec/time_text.h"
#include "hbingest/routing/build_routes.h"

namespace hbingest::app {
namespace {

struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct Options {
  std::optional<std::string> config_file;  // with route: the key spec of a configured route
  std::optional<std::string> route;
  std::optional<std::string> spec_file;
  std::optional<std::string> preset;
  std::map<std::string, std::string, std::less<>> params;
  std::optional<std::string> event_json;
  std::optional<std::string> event_file;  // the message value's bytes, as a producer wrote them
  std::string format = "json";
  std::optional<std::string> registry_url;
  keyspec::KafkaMeta meta;
  std::string topic;
  std::optional<std::string> kafka_key;                      // --key: the message key's bytes
  std::optional<std::string> key_format;                     // --key-format, as decode.key_format
  std::vector<std::pair<std::string, std::string>> headers;  // --header NAME=VALUE
  std::optional<std::string> event_id;
  std::map<std::string, std::string, std::less<>> equals;
  std::optional<std::int64_t> from_ms;
  std::optional<std::int64_t> to_ms;
  std::optional<int> splits;
  std::vector<std::string> positional;
};

std::pair<std::string, std::string> split_assignment(const std::string& flag, const std::string& text) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) throw UsageError(flag + " expects NAME=VALUE, got '" + text + "'");
  return {text.substr(0, eq), text.substr(eq + 1)};
}

std::int64_t parse_time(const std::string& flag, const std::string& text) {
  const auto ms = keyspec::parse_instant_ms(text);
  if (!ms) throw UsageError(flag + " expects epoch ms or an RFC 3339 time, got '" + text + "'");
  return *ms;
}

// The key spec of route `name` (its name, or an event type it takes) as `run` builds it.
keyspec::KeySpec route_spec(const std::string& config_file, const std::string& name) {
  const auto config = config::load_config(config_file);
  const auto routes = routing::build_routes(config);
  for (const auto& route : routes.all()) {
    if (route->name == name) return *route->key;
  }
  if (const auto* route = routes.for_query(name)) return *route->key;
  throw UsageError("--route: no route named '" + name + "' and none takes event type '" + name + "' in " + config_file);
}

keyspec::KeySpec load_spec(const Options& o) {
  if (o.config_file.has_value() != o.route.has_value()) throw UsageError("--config and --route go together");
  if (o.config_file) {
    if (o.spec_file || o.preset) throw UsageError("give --config with --route, or --spec, or --preset");
    return route_spec(*o.config_file, *o.route);
  }
  if (o.spec_file.has_value() == o.preset.has_value())
    throw UsageError("give exactly one of --spec FILE, --preset NAME or --config FILE --route NAME");
  if (o.spec_file && !o.params.empty()) throw UsageError("--param applies to --preset only");
  auto spec =
      o.spec_file ? keyspec::KeySpec::from_yaml_file(*o.spec_file) : keyspec::KeySpec::preset(*o.preset, o.params);
  for (const auto& w : spec.warnings()) std::cerr << "warning: " << w << "\n";
  return spec;
}

// Printable ASCII as itself, everything else as \xHH, so the text shows padding and binary parts.
std::string escaped(std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  for (const char c : bytes) {
    const auto u = static_cast<unsigned char>(c);
    if (u == '\\') {
      s += "\\\\";
    } else if (u >= 0x20 && u < 0x7f) {
      s += c;
    } else {
      s += "\\x";
      s += kHex[u >> 4];
      s += kHex[u & 15];
    }
  }
  return s;
}

std::string unhex(const std::string& text) {
  if (text.size() % 2 != 0) throw UsageError("HEX must have an even number of digits");
  auto nibble = [&](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    throw UsageError("HEX has a non-hex character '" + std::string(1, c) + "'");
  };
  std::string out;
  for (std::size_t i = 0; i < text.size(); i += 2) out += static_cast<char>(nibble(text[i]) * 16 + nibble(text[i + 1]));
  return out;
}

void print_key(const keyspec::KeySpec& spec, std::string_view key) {
  const auto parts = spec.decode(key);  // first, so a bad key prints only the error
  std::cout << "key:    " << key.size() << " bytes (max " << spec.max_key_length() << ")\n"
            << "hex:    " << keyspec::to_hex(key) << "\n"
            << "text:   " << escaped(key) << "\n"
            << "parts:\n";
  std::printf("  %-11s %-14s %-10s %-40s %s\n", "bytes", "name", "type", "bytes (escaped)", "value");
  for (const auto& p : parts) {
    const std::string range = "[" + std::to_string(p.begin) + "," + std::to_string(p.end) + ")";
    std::string value = p.text;
    if (p.number && std::to_string(*p.number) != p.text) value += "  (" + std::to_string(*p.number) + ")";
    std::printf("  %-11s %-14s %-10s %-40s %s\n", range.c_str(), p.name.c_str(), p.type.c_str(),
                escaped(key.substr(p.begin, p.end - p.begin)).c_str(), escaped(value).c_str());
  }
}

std::string read_event_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError("--event-file: cannot open '" + path + "'");
  return std::string(std::istreambuf_iterator<char>(in), {});
}

int build(const Options& o) {
  const auto spec = load_spec(o);
  if (o.event_json.has_value() == o.event_file.has_value()) {
    throw UsageError("give exactly one of --event JSON or --event-file FILE");
  }
  const auto kind = config::event_format_named(o.format);
  if (!kind) throw UsageError("--format: unknown format '" + o.format + "': use json, avro, protobuf or json_schema");
  std::unique_ptr<connectors::SchemaRegistry> registry;
  if (event_formats::needs_schema_registry(*kind)) {
    const char* from_env = std::getenv("HBINGEST_SCHEMA_REGISTRY");
    const std::string url = o.registry_url ? *o.registry_url : (from_env != nullptr ? from_env : "");
    if (url.empty()) throw UsageError("--format " + o.format + " needs --registry URL (or HBINGEST_SCHEMA_REGISTRY)");
    connectors::HttpSchemaRegistryOptions options;
    options.url = url;
    try {
      registry = connectors::make_http_schema_registry(options);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("--registry: ") + e.what());
    }
  }
  const std::string bytes = o.event_file ? read_event_file(*o.event_file) : *o.event_json;
  const std::string flag = o.event_file ? "--event-file" : "--event";
  // The daemon's decoder, so the key is the one it writes: the same field view (a repeated name, a
  // framed value's schema by id), the Kafka key and headers as inputs (key, key.PATH, header:NAME).
  config::DecodeConfig decode;
  decode.format = *kind;
  decode.max_event_bytes = std::numeric_limits<std::size_t>::max();
  if (o.key_format) {
    const auto key_kind = config::key_format_named(*o.key_format);
    if (!key_kind) throw UsageError("--key-format: unknown key format '" + *o.key_format + "'");
    if (const auto framed = config::key_event_format(*key_kind);
        framed && event_formats::needs_schema_registry(*framed) && registry == nullptr) {
      throw UsageError("--key-format " + *o.key_format + " needs --registry URL (or HBINGEST_SCHEMA_REGISTRY)");
    }
    decode.key_format = *key_kind;
  }
  event_formats::EventDecoder decoder(decode, registry.get(), {}, {.reads_key = o.key_format.has_value()});
  std::vector<event_formats::HeaderView> headers;
  for (const auto& [name, value] : o.headers) headers.push_back({name, std::string_view(value)});
  const event_formats::MessageView view{
      .topic = o.topic,
      .payload = std::string_view(bytes),
      .timestamp_ms = o.meta.timestamp_ms,
      .partition = o.meta.partition,
      .offset = o.meta.offset,
      .key = o.kafka_key ? std::optional<std::string_view>(*o.kafka_key) : std::nullopt,
      .headers = headers};
  event_formats::DecodedEvent event;
  if (const auto failure = decoder.decode(view, event)) {
    if (failure->kind == event_formats::DecodeFailure::Kind::unavailable) {
      std::cerr << "hbingest key build: " << failure->message << "\n";
      return 1;
    }
    throw UsageError(flag + ": " + failure->reason + ": " + failure->message);
  }
  keyspec::KafkaMeta meta = o.meta;
  meta.topic = o.topic;
  std::string key;
  if (const auto err = spec.encode(decoder.fields(), meta, key)) {
    std::cerr << "hbingest key build: " << err->message() << "\n";
    return 1;
  }
  print_key(spec, key);
  return 0;
}

int explain(const Options& o) {
  const auto spec = load_spec(o);
  if (o.positional.size() != 1) throw UsageError("key explain needs exactly one HEX key");
  const std::string key = unhex(o.positional[0]);
  try {
    print_key(spec, key);
  } catch (const keyspec::DecodeError& e) {
    std::cerr << "hbingest key explain: " << e.what() << "\n";
    return 1;
  }
  return 0;
}

int plan(const Options& o) {
  const auto spec = load_spec(o);
  std::vector<keyspec::ScanRange> ranges;
  if (o.splits) {
    if (o.event_id || !o.equals.empty() || o.from_ms || o.to_ms)
      throw UsageError("--splits plans the whole table; drop the filters");
    ranges = spec.plan_full_table(*o.splits);
  } else {
    keyspec::PlanRequest request;
    request.equals = o.equals;
    if (o.event_id) {
      const auto event = spec.event_component();
      if (!event) throw UsageError("--event-id: spec " + std::string(spec.source_name()) + " has no event component");
      request.equals[*event] = *o.event_id;
    }
    request.from_ms = o.from_ms;
    request.to_ms = o.to_ms;
    ranges = spec.plan(request);
  }
  std::cout << ranges.size() << " range(s), start inclusive, stop exclusive (empty stop = end of table)\n";
  for (const auto& r : ranges) {
    std::cout << "bucket " << r.bucket << "\n  start " << keyspec::to_hex(r.start) << "  " << escaped(r.start)
              << "\n  stop  " << keyspec::to_hex(r.stop) << "  " << escaped(r.stop) << "\n";
  }
  return 0;
}

}  // namespace

int key_command(const Args& args) {
  CLI::App cli{
      "Build, explain and plan row keys. SPEC is --spec FILE, --preset NAME [--param KEY=VALUE]... or\n"
      "--config FILE --route NAME (a route's name or an event type it takes);\n"
      "times are epoch ms or RFC 3339.",
      "hbingest key"};
  cli.require_subcommand(1);
  Options o;
  o.meta.timestamp_ms = -1;
  std::vector<std::string> params, equals;
  std::optional<std::string> kafka_ts, from, to, hex_key;
  std::vector<std::string> header_args;
  const auto add_spec = [&](CLI::App* sub) {
    sub->add_option("--spec", o.spec_file, "key spec YAML file");
    sub->add_option("--preset", o.preset, "built-in preset (hbingest key presets lists them)");
    sub->add_option("--param", params, "preset parameter KEY=VALUE (repeatable)");
    sub->add_option("--config", o.config_file, "daemon config file (with --route)");
    sub->add_option("--route", o.route, "the route (its name, or an event type it takes) whose key spec to use");
  };
  auto* build_cmd = cli.add_subcommand("build", "encode an event into a key, each part annotated");
  add_spec(build_cmd);
  build_cmd->add_option("--event", o.event_json, "the event as JSON text");
  build_cmd->add_option("--event-file", o.event_file, "the message value's bytes (e.g. Confluent-framed Avro)");
  build_cmd->add_option("--format", o.format, "json (default), avro, protobuf or json_schema, as decode.format");
  build_cmd->add_option("--registry", o.registry_url,
                        "schema registry base URL for avro/protobuf/json_schema (default: $HBINGEST_SCHEMA_REGISTRY)");
  build_cmd->add_option("--topic", o.topic, "Kafka topic");
  build_cmd->add_option("--partition", o.meta.partition, "Kafka partition");
  build_cmd->add_option("--offset", o.meta.offset, "Kafka offset");
  build_cmd->add_option("--kafka-ts", kafka_ts, "Kafka timestamp");
  build_cmd->add_option("--key", o.kafka_key, "the message key (text), for key / key.PATH inputs");
  build_cmd->add_option("--key-format", o.key_format, "how the key is written, as decode.key_format (default text)");
  build_cmd->add_option("--header", header_args, "a message header NAME=VALUE, for header:NAME inputs (repeatable)");
  auto* explain_cmd = cli.add_subcommand("explain", "split key bytes (hex) into named parts");
  add_spec(explain_cmd);
  explain_cmd->add_option("key", hex_key, "the key as hex")->required();
  auto* plan_cmd = cli.add_subcommand("plan", "print the scan ranges (one per salt bucket) of a query");
  add_spec(plan_cmd);
  plan_cmd->add_option("--event-id", o.event_id, "value of the spec's event component");
  plan_cmd->add_option("--eq", equals, "component equality NAME=VALUE (repeatable)");
  plan_cmd->add_option("--from", from, "range start (inclusive)");
  plan_cmd->add_option("--to", to, "range end (exclusive)");
  plan_cmd->add_option("--splits", o.splits, "plan the whole table in N splits instead");
  cli.add_subcommand("presets", "list the built-in presets");
  if (auto exit = parse_command_line(cli, args)) return *exit;

  try {
    for (const auto& p : params) o.params.insert(split_assignment("--param", p));
    for (const auto& e : equals) o.equals.insert(split_assignment("--eq", e));
    for (const auto& h : header_args) o.headers.push_back(split_assignment("--header", h));
    if (kafka_ts) o.meta.timestamp_ms = parse_time("--kafka-ts", *kafka_ts);
    if (from) o.from_ms = parse_time("--from", *from);
    if (to) o.to_ms = parse_time("--to", *to);
    if (hex_key) o.positional.push_back(*hex_key);
    if (build_cmd->parsed()) return build(o);
    if (explain_cmd->parsed()) return explain(o);
    if (plan_cmd->parsed()) return plan(o);
    for (const auto& name : keyspec::KeySpec::preset_names()) std::cout << name << "\n";
    return 0;
  } catch (const UsageError& e) {
    std::cerr << "hbingest key: " << e.what() << " (hbingest key --help)\n";
    return 2;
  }
}

}  // namespace hbingest::app
