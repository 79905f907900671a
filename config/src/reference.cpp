#include "hbingest/config/loader.h"
#include "sections.h"

namespace hbingest::config {

namespace {

std::string one_line(const YAML::Node& node) {
  if (node.IsNull()) return "unset";
  if (node.IsScalar()) return node.Scalar().empty() ? "\"\"" : node.Scalar();
  YAML::Emitter out;
  out << YAML::Flow << node;
  return out.c_str();
}

std::string cell(std::string text) {
  std::string out;
  for (char c : text) {
    if (c == '|') out += '\\';
    out += c;
  }
  return out;
}

template <class S>
void table(std::string& out, const std::string& prefix, const detail::Options<S>& options) {
  const S defaults{};
  out += "| key | type | default | bounds | description |\n|---|---|---|---|---|\n";
  for (const auto& option : options) {
    std::string default_text = option.required ? "**required**" : "—";
    if (!option.required && option.write) {
      if (const auto value = option.write(defaults)) default_text = "`" + one_line(*value) + "`";
    }
    out += "| `" + prefix + option.key + "` | " + option.type + " | " + cell(default_text) + " | " +
           cell(option.bounds) + " | " + cell(option.description) + " |\n";
  }
  out += '\n';
}

template <class S>
void section(std::string& out, const std::string& name, const detail::Options<S>& options) {
  const auto& top = detail::config_options();
  const auto it = std::find_if(top.begin(), top.end(), [&](const auto& o) { return o.key == name; });
  out += "### `" + name + "`\n\n" + it->description + (it->required ? " Required." : "") + "\n\n";
  table(out, name + ".", options);
}

}  // namespace

std::string configuration_reference_markdown() {
  std::string out;
  section(out, "kafka", detail::kafka_options());
  section(out, "hbase", detail::hbase_options());
  out += "#### `hbase.tls`\n\nTLS to the Thrift2 gateways (through a TLS terminator: see docs/operations.md).\n\n";
  table(out, "hbase.tls.", detail::hbase_tls_options());
  out +=
      "#### `hbase.sasl`\n\nKerberos to the Thrift2 gateways of a secured cluster (SASL GSSAPI on the binary "
      "transport, as HBase's TSaslServerTransport speaks it).\n\n";
  table(out, "hbase.sasl.", detail::hbase_sasl_options());
  section(out, "writer", detail::writer_options());
  section(out, "decode", detail::decode_options());
  section(out, "schema_registry", detail::schema_registry_options());
  out += "#### `schema_registry.basic_auth`\n\nHTTP basic authentication to the registry.\n\n";
  table(out, "schema_registry.basic_auth.", detail::schema_registry_basic_auth_options());
  out += "#### `schema_registry.tls`\n\nTLS to an https:// registry (see docs/schema-registry.md).\n\n";
  table(out, "schema_registry.tls.", detail::schema_registry_tls_options());
  out +=
      "### `routes` and `default_route`\n\n"
      "`routes` is a list; each entry (and `default_route`, which has no `event_types`) takes:\n\n";
  table(out, "", detail::route_options());
  out += "#### `columns` entries\n\nEach entry of a route's `columns` (docs/rows.md):\n\n";
  table(out, "", detail::column_options());
  section(out, "table", detail::table_options());
  section(out, "dlq", detail::dlq_options());
  section(out, "http", detail::http_options());
  section(out, "query", detail::query_options());
  section(out, "logging", detail::logging_options());
  out += "### Top level\n\n";
  detail::Options<Config> scalars;
  for (const auto& option : detail::config_options()) {
    if (option.type != "section") scalars.push_back(option);
  }
  table(out, "", scalars);
  return out;
}

}  // namespace hbingest::config
