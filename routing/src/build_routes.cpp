#include "hbingest/routing/build_routes.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <set>

#include "hbingest/connectors/hbase_types.h"
#include "hbingest/event_formats/input_name.h"
#include "hbingest/routing/key_uniqueness.h"

namespace hbingest::routing {

namespace {

std::string join_lines(const std::vector<std::string>& lines) {
  std::string text;
  for (const auto& line : lines) text.append(text.empty() ? "" : "\n").append(line);
  return text;
}

// The inline `key:` node of a route in the original document, so key spec errors carry the
// config file's own lines; a null node when it cannot be found (then the dumped YAML text is used).
YAML::Node inline_key_node(const config::Config& config, std::string_view name) {
  try {
    const YAML::Node root = YAML::LoadFile(config.source.string());
    if (name == "default_route") return root["default_route"]["key"];
    const std::size_t index = std::stoul(std::string(name.substr(name.find('[') + 1)));
    return root["routes"][index]["key"];
  } catch (const std::exception&) {
    return YAML::Node();
  }
}

keyspec::KeySpec load_key_spec(const config::Config& config, const config::RouteConfig& route, std::string_view name) {
  if (route.preset) return keyspec::KeySpec::preset(*route.preset, route.preset_params);
  if (route.key_file) return keyspec::KeySpec::from_yaml_file(*route.key_file);
  if (route.key_yaml) {
    const YAML::Node node = config.source.empty() ? YAML::Node() : inline_key_node(config, name);
    return node.IsMap() ? keyspec::KeySpec::from_yaml_node(node, config.source.string())
                        : keyspec::KeySpec::from_yaml_text(*route.key_yaml, route.key_source);
  }
  throw keyspec::SpecError("route for table '" + route.table + "' has no key spec");
}

// load_key_spec, with every problem naming the config file and the route.
keyspec::KeySpec load_key_spec_with_context(const config::Config& config, const config::RouteConfig& route,
                                            std::string_view name) {
  const std::string prefix = route.key_source + ": " + std::string(name) + ".key: ";
  try {
    return load_key_spec(config, route, name);
  } catch (const keyspec::SpecError& e) {
    std::vector<std::string> problems;
    problems.reserve(e.problems().size());
    for (const auto& problem : e.problems()) problems.push_back(prefix + problem);
    throw keyspec::SpecError(std::move(problems));
  } catch (const std::exception& e) {
    throw keyspec::SpecError(prefix + e.what());
  }
}

// The allowed values of each template variable: table_values, else the route's own topics (or the
// literal subscription) and event types.
std::map<std::string, AllowedValues, std::less<>> allowed_values(const config::Config& config,
                                                                 const config::RouteConfig& route) {
  std::map<std::string, AllowedValues, std::less<>> allowed;
  for (const auto& [variable, values] : route.table_values) allowed[variable] = {values.values, values.pattern};
  if (!allowed.contains("topic")) {
    AllowedValues topics;
    for (const auto& topic : route.topics.empty() ? config.kafka.topics : route.topics) {
      if (!topic.starts_with('^')) topics.values.push_back(topic);
    }
    if (!topics.values.empty() && route.table.find("${topic}") != std::string::npos) allowed["topic"] = topics;
  }
  if (!allowed.contains("event_type") && !route.event_types.empty() &&
      route.table.find("${event_type}") != std::string::npos) {
    allowed["event_type"] = {route.event_types, std::nullopt};
  }
  return allowed;
}

class RouteBuilder {
 public:
  RouteBuilder(const config::Config& config, std::vector<std::string>* warnings)
      : config_(config), warnings_(warnings) {}

  std::optional<Route> build(const config::RouteConfig& rc, const std::string& place) {
    const std::string name = rc.name.empty() ? place : rc.name;
    const std::size_t before = problems.size();
    const std::string where = (rc.table_source.empty() ? rc.key_source : rc.table_source) + ": " + place + ": ";
    // A route without a key spec was reported by the config loader already.
    if (!rc.preset && !rc.key_file && !rc.key_yaml) return std::nullopt;
    std::optional<keyspec::KeySpec> spec;
    try {
      spec = build_key_spec(config_, rc, place);
      if (warnings_ != nullptr) {
        for (const auto& w : spec->warnings()) warnings_->push_back(rc.key_source + ": " + place + ": " + w);
        for (const auto& w : check_key_uniqueness(config_, rc.topics, *spec, place).warnings) {
          warnings_->push_back(rc.key_source + ": " + w);
        }
      }
    } catch (const keyspec::SpecError& e) {
      problems.insert(problems.end(), e.problems().begin(), e.problems().end());
    }
    std::optional<TableTemplate> table;
    try {
      table.emplace(rc.table, config_.hbase.ns, allowed_values(config_, rc));
    } catch (const std::invalid_argument& e) {
      problems.push_back(where + e.what());
    }
    std::optional<RowMapping> mapping;
    try {
      const config::NullFields null_fields = rc.null_fields.value_or(config_.decode.null_fields.value_or(
          config_.decode.write_null_fields ? config::NullFields::empty : config::NullFields::skip));
      mapping =
          rc.columns ? RowMapping::from_columns(*rc.columns, null_fields) : RowMapping::from_decode(config_.decode);
    } catch (const std::invalid_argument& e) {
      // One problem per line, each naming the route.
      std::string_view text = e.what();
      while (!text.empty()) {
        const std::size_t end = std::min(text.find('\n'), text.size());
        std::string line(text.substr(0, end));
        const std::size_t at = line.find(": columns[");
        if (at != std::string::npos) line.insert(at + 2, place + ".");
        problems.push_back(std::move(line));
        text.remove_prefix(std::min(end + 1, text.size()));
      }
    }
    if (rc.format && rc.topics.empty()) {
      problems.push_back(where + "format: needs topics (the format of which topics?)");
    }
    if (rc.format && !config_.schema_registry.url) {
      const auto format = config::event_format_named(*rc.format);
      if (format && *format != config::EventFormat::json) {
        problems.push_back(where + "format " + *rc.format + " reads schemas: set schema_registry.url");
      }
    }
    if (table && mapping) check_template_cap(*table, rc, where);
    if (spec && mapping && table) check_key_reads(*spec, *mapping, *table, rc, where);
    const config::OnTombstone on_tombstone = rc.on_tombstone.value_or(config_.decode.on_tombstone);
    if (spec) check_inputs(*spec, place, rc.key_source);
    if (on_tombstone == config::OnTombstone::delete_row) {
      if (rc.topics.empty()) {
        problems.push_back(where +
                           "on_tombstone delete needs topics: a tombstone has no event type, its topic "
                           "alone finds the route whose row it deletes");
      }
      if (spec) check_delete_key(*spec, place, rc.key_source);
      if (table) {
        for (const auto& variable : table->variables()) {
          const bool from_value = variable == "event_type" ||
                                  (variable.starts_with("field:") && reads_value(std::string_view(variable).substr(6)));
          if (from_value) {
            problems.push_back(where + "on_tombstone delete: table '" + rc.table + "' reads ${" + variable +
                               "}, which a tombstone (no value) does not have");
          }
        }
      }
    }
    if (problems.size() != before || !spec || !table || !mapping) return std::nullopt;
    Route route{name,
                rc.topics,
                rc.event_types,
                std::move(*table),
                rc.max_tables,
                std::make_shared<const keyspec::KeySpec>(std::move(*spec)),
                std::move(*mapping),
                on_tombstone,
                rc.table_source,
                format_of(rc)};
    return route;
  }

  std::vector<std::string> problems;

 private:
  static bool reads_value(std::string_view input) {
    try {
      return event_formats::parse_input_name(input).reads_value();
    } catch (const std::invalid_argument&) {
      return true;
    }
  }

  config::EventFormat format_of(const config::RouteConfig& rc) const {
    if (rc.format) return config::event_format_named(*rc.format).value_or(config_.decode.format);
    std::optional<config::EventFormat> common;
    for (const auto& topic : rc.topics) {
      const auto it = config_.decode.topic_formats.find(topic);
      const auto format = it == config_.decode.topic_formats.end()
                              ? config_.decode.format
                              : config::event_format_named(it->second).value_or(config_.decode.format);
      if (common && *common != format) return config_.decode.format;
      common = format;
    }
    return common.value_or(config_.decode.format);
  }

  // Every field a key component reads must be an input name (docs/rows.md, "Inputs").
  void check_inputs(const keyspec::KeySpec& spec, const std::string& place, const std::string& source) {
    for (const auto& component : spec.components()) {
      for (const auto& field : component.fields) {
        try {
          (void)event_formats::parse_input_name(field);
        } catch (const std::invalid_argument& e) {
          problems.push_back(source + ": " + place + ".key: component '" + component.name + "': " + e.what());
        }
      }
    }
  }

  // Listed values making more tables than the route may make: bootstrap would create none of them.
  void check_template_cap(const TableTemplate& table, const config::RouteConfig& rc, const std::string& where) {
    if (!table.is_template()) return;
    // The values the template was built with: table_values, else the defaults of ${topic} and
    // ${event_type} (the route's topics and event types), which bootstrap enumerates alike.
    const auto allowed = allowed_values(config_, rc);
    std::size_t count = 1;
    for (const auto& variable : table.variables()) {
      const auto it = allowed.find(variable);
      if (it != allowed.end() && !it->second.pattern) count *= std::max<std::size_t>(1, it->second.values.size());
      if (count > rc.max_tables) {
        problems.push_back(where + "table '" + rc.table + "': its listed values make more than max_tables (" +
                           std::to_string(rc.max_tables) + ") tables");
        return;
      }
    }
  }

  // key.PATH (in the key spec, a column or a template) reads a field of a decoded key: the route's
  // topics must have a structured key format.
  void check_key_reads(const keyspec::KeySpec& spec, const RowMapping& mapping, const TableTemplate& table,
                       const config::RouteConfig& rc, const std::string& where) {
    std::vector<std::string> names;
    for (const auto& component : spec.components())
      names.insert(names.end(), component.fields.begin(), component.fields.end());
    for (const auto& rule : mapping.rules()) {
      if (rule.kind == RowMapping::Rule::Kind::members && rule.from == "key") {
        names.push_back("key.*");  // each member of the decoded key: none in a text or bytes key
      } else if (rule.kind != RowMapping::Rule::Kind::all_fields && !rule.raw_value) {
        names.push_back(rule.from);
      }
    }
    for (const auto& variable : table.variables()) {
      if (variable.starts_with("field:")) names.push_back(variable.substr(6));
    }
    const auto format_of = [&](const std::string& topic) {
      const auto it = config_.decode.topic_key_formats.find(topic);
      const auto named =
          it == config_.decode.topic_key_formats.end() ? std::nullopt : config::key_format_named(it->second);
      return named.value_or(config_.decode.key_format);
    };
    for (const auto& name : names) {
      if (!name.starts_with("key.")) continue;
      const auto& topics = rc.topics.empty() ? config_.kafka.topics : rc.topics;
      for (const auto& topic : topics) {
        const auto format = topic.starts_with('^') ? config_.decode.key_format : format_of(topic);
        if (format == config::KeyFormat::text || format == config::KeyFormat::bytes) {
          problems.push_back(where + "'" + (name == "key.*" ? std::string("key") : name) +
                             "' reads a field of the Kafka key, but the keys of topic '" + topic + "' are " +
                             std::string(config::key_format_name(format)) +
                             " (set decode.key_format or decode.topic_key_formats to json, avro, protobuf or "
                             "json_schema)");
          return;
        }
      }
    }
  }

  // A tombstone has no value: its row key must come from the Kafka key and metadata only.
  void check_delete_key(const keyspec::KeySpec& spec, const std::string& place, const std::string& source) {
    for (const auto& component : spec.components()) {
      // Its own offset or timestamp names no put's row: the delete would remove nothing.
      if (component.source.find("kafka:offset") != std::string::npos ||
          component.source.find("kafka:timestamp") != std::string::npos) {
        problems.push_back(source + ": " + place + ".key: on_tombstone delete: component '" + component.name +
                           "' reads " + component.source +
                           ", which differs between a put and the tombstone that should delete its row");
      }
      for (const auto& field : component.fields) {
        if (!reads_value(field)) continue;
        problems.push_back(source + ": " + place +
                           ".key: on_tombstone delete needs a key made of the Kafka key and "
                           "metadata only, but component '" +
                           component.name + "' reads the value's field '" + field +
                           "' (read key.FIELD, header:NAME or kafka:... instead)");
      }
    }
  }

  const config::Config& config_;
  std::vector<std::string>* warnings_;
};

// Whether `mapping` may write family:qualifier (an empty qualifier: a cell per member).
bool may_write(const RowMapping& mapping, std::string_view family, std::string_view qualifier) {
  return std::any_of(mapping.rules().begin(), mapping.rules().end(), [&](const RowMapping::Rule& rule) {
    return rule.family == family && (rule.qualifier.empty() || rule.qualifier == qualifier);
  });
}

// A query reads a table's cells by the mapping of one route (the event type's; a full-table export
// reads every route's rows alike): routes sharing a table must write each column they both write
// with one type, or the query API reads one route's cells as the other's type.
void check_shared_tables(const std::vector<Route>& routes, const std::optional<Route>& default_route,
                         std::vector<std::string>& problems) {
  std::vector<const Route*> all;
  for (const auto& route : routes) all.push_back(&route);
  if (default_route) all.push_back(&*default_route);
  for (std::size_t i = 0; i < all.size(); ++i) {
    for (std::size_t j = i + 1; j < all.size(); ++j) {
      const Route& a = *all[i];
      const Route& b = *all[j];
      if (a.table.text() != b.table.text()) continue;
      std::set<std::pair<std::string, std::string>> columns;  // written by a rule of either, "" for family:*
      for (const Route* route : {&a, &b}) {
        for (const auto& rule : route->columns.rules()) columns.insert({rule.family, rule.qualifier});
      }
      for (const auto& [family, qualifier] : columns) {
        if (!may_write(a.columns, family, qualifier) || !may_write(b.columns, family, qualifier)) continue;
        const ValueType in_a = a.columns.type_of(family, qualifier);
        const ValueType in_b = b.columns.type_of(family, qualifier);
        if (in_a == in_b) continue;
        const std::string column = family + ":" + (qualifier.empty() ? std::string("*") : qualifier);
        problems.push_back(b.source + ": " + b.name + ": table '" + b.table.text() + "' is " + a.name +
                           "'s too, which writes " + column + " as " + std::string(value_type_name(in_a)) +
                           ", this route as " + std::string(value_type_name(in_b)) +
                           ": a query reads the table's cells by one route's types");
        break;
      }
    }
  }
}

}  // namespace

RouteError::RouteError(std::vector<std::string> problems)
    : std::runtime_error(join_lines(problems)),
      problems_(std::make_shared<const std::vector<std::string>>(std::move(problems))) {}

keyspec::KeySpec build_key_spec(const config::Config& config, const config::RouteConfig& route, std::string_view name) {
  keyspec::KeySpec spec = load_key_spec_with_context(config, route, name);
  auto uniqueness = check_key_uniqueness(config, route.topics, spec, name);
  if (!uniqueness.problems.empty()) {
    for (auto& problem : uniqueness.problems) problem = route.key_source + ": " + problem;
    throw keyspec::SpecError(std::move(uniqueness.problems));
  }
  return spec;
}

std::map<std::string, std::string, std::less<>> topic_formats(const config::Config& config) {
  std::map<std::string, std::string, std::less<>> formats = config.decode.topic_formats;
  for (const auto& route : config.routes) {
    if (!route.format) continue;
    for (const auto& topic : route.topics) formats.emplace(topic, *route.format);
  }
  return formats;
}

bool reads_decoded_key(const RouteSet& routes) {
  const auto reads_key = [](std::string_view name) {
    try {
      return event_formats::parse_input_name(name).reads_decoded_key();
    } catch (const std::invalid_argument&) {
      return false;
    }
  };
  for (const auto& route : routes.all()) {
    for (const auto& component : route->key->components()) {
      for (const auto& field : component.fields) {
        if (reads_key(field)) return true;
      }
    }
    for (const auto& rule : route->columns.rules()) {
      if (rule.input.reads_decoded_key()) return true;
    }
    for (const auto& variable : route->table.variables()) {
      if (variable.starts_with("field:") && reads_key(std::string_view(variable).substr(6))) return true;
    }
  }
  return false;
}

RouteSet build_routes(const config::Config& config, std::vector<std::string>* warnings) {
  RouteBuilder builder(config, warnings);
  std::vector<Route> routes;
  std::set<std::string> names;
  std::map<std::string, std::pair<std::string, std::string>> format_of_topic;  // topic → (format, route)
  for (const auto& [topic, format] : config.decode.topic_formats)
    format_of_topic[topic] = {format, "decode.topic_formats"};
  for (std::size_t i = 0; i < config.routes.size(); ++i) {
    const config::RouteConfig& rc = config.routes[i];
    const std::string place = "routes[" + std::to_string(i) + "]";
    if (!rc.name.empty() && !names.insert(rc.name).second) {
      builder.problems.push_back(rc.table_source + ": " + place + ".name: '" + rc.name + "' names another route too");
    }
    if (rc.format) {
      for (const auto& topic : rc.topics) {
        const auto [it, inserted] = format_of_topic.emplace(topic, std::pair{*rc.format, place});
        if (!inserted && it->second.first != *rc.format) {
          builder.problems.push_back(rc.table_source + ": " + place + ".format: topic '" + topic + "' is " +
                                     it->second.first + " in " + it->second.second + ", " + *rc.format + " here");
        }
      }
    }
    if (auto route = builder.build(rc, place)) routes.push_back(std::move(*route));
  }
  std::optional<Route> default_route;
  if (config.default_route) default_route = builder.build(*config.default_route, "default_route");
  // A tombstone goes to every route taking its topic: they must agree on what it does.
  std::map<std::string, std::pair<config::OnTombstone, std::string>> tombstone_of_topic;
  for (const auto& route : routes) {
    for (const auto& topic : route.topics) {
      const auto [it, inserted] = tombstone_of_topic.emplace(topic, std::pair{route.on_tombstone, route.name});
      if (!inserted && it->second.first != route.on_tombstone) {
        builder.problems.push_back(route.source + ": " + route.name + ".on_tombstone: differs from " +
                                   it->second.second + "'s for topic '" + topic +
                                   "': a tombstone of one topic does one thing");
      } else if (!inserted && route.on_tombstone == config::OnTombstone::delete_row) {
        builder.problems.push_back(route.source + ": " + route.name + ".on_tombstone: " + it->second.second +
                                   " deletes tombstones of topic '" + topic +
                                   "' already: one route per topic deletes (a tombstone is one row)");
      }
    }
  }
  check_shared_tables(routes, default_route, builder.problems);
  if (!builder.problems.empty()) throw RouteError(std::move(builder.problems));
  return RouteSet(std::move(routes), std::move(default_route));
}

}  // namespace hbingest::routing
