#include "avro_schema.h"

#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <string_view>
#include <unordered_map>

#include "schema_cache.h"

namespace hbingest::event_formats::avro {

namespace {

using nlohmann::json;

// avro-c's last error text (avro_strerror), without a trailing newline.
std::string last_error() {
  std::string text = avro_strerror();
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

bool is_primitive(std::string_view name) {
  static const std::set<std::string_view> kPrimitives = {"null",  "boolean", "int",   "long",
                                                         "float", "double",  "bytes", "string"};
  return kPrimitives.contains(name);
}

std::string full_name(const json& named, const std::string& enclosing_namespace) {
  // Not value("name", ...): it throws for a name that is not a string; avro-c says what is wrong.
  const auto it = named.find("name");
  const std::string name = it != named.end() && it->is_string() ? it->get<std::string>() : std::string();
  if (name.find('.') != std::string::npos) return name;
  const auto space = named.contains("namespace") && named["namespace"].is_string()
                         ? named["namespace"].get<std::string>()
                         : enclosing_namespace;
  return space.empty() ? name : space + "." + name;
}

std::string namespace_of(const std::string& full) {
  const auto dot = full.rfind('.');
  return dot == std::string::npos ? std::string() : full.substr(0, dot);
}

// Real schemas reference a handful of named types; as for Protobuf imports (protobuf_schema.cpp).
constexpr std::size_t kMaxReferences = 256;

// A schema's references, fetched and parsed: the named types other subjects define, by full name.
class References {
 public:
  explicit References(connectors::SchemaRegistry& registry) : registry_(registry) {}

  void fetch(const std::vector<connectors::SchemaReference>& references, int depth) {
    for (const auto& reference : references) {
      if (definitions_.contains(reference.name)) continue;
      if (depth > kMaxNesting) throw BadSchema("references nest deeper than " + std::to_string(kMaxNesting));
      // Each is a fetch the pipeline thread waits for and text kept until the schema is built.
      if (definitions_.size() >= kMaxReferences) {
        throw BadSchema("more than " + std::to_string(kMaxReferences) + " references (reference " + reference.name +
                        ", subject " + reference.subject + ")");
      }
      const auto schema = registry_.schema_by_subject_version(reference.subject, reference.version);
      const auto where = "reference " + reference.name + " (subject " + reference.subject + " version " +
                         std::to_string(reference.version) + ")";
      if (schema.type != connectors::SchemaType::avro) throw BadSchema(where + " is not an Avro schema");
      auto parsed = json::parse(schema.text, nullptr, false);
      if (parsed.is_discarded()) throw BadSchema(where + " is not valid JSON");
      definitions_.emplace(reference.name, std::move(parsed));  // before its own: a cycle ends here
      fetch(schema.references, depth + 1);
    }
  }
  bool empty() const { return definitions_.empty(); }

  // Walks a schema's JSON: counts its depth (kMaxNesting), and defines each referenced name where it
  // is first used, as Avro wants a named type defined before (or where) it is used.
  void inline_into(json& type, const std::string& space, int depth) {
    if (depth > kMaxNesting) throw BadSchema("the schema nests deeper than " + std::to_string(kMaxNesting));
    if (type.is_string()) {
      const auto name = type.get<std::string>();
      if (is_primitive(name)) return;
      const auto full = name.find('.') == std::string::npos && !space.empty() ? space + "." + name : name;
      if (defined_.contains(full) || defined_.contains(name)) return;
      auto it = definitions_.find(full);
      if (it == definitions_.end()) it = definitions_.find(name);
      if (it == definitions_.end()) return;  // avro-c says what is unknown
      // Inlined once: a definition that names itself otherwise (or is no named type) leaves this
      // name undefined, and inlining it at every use would copy it exponentially often through
      // references that use each other twice. Its second use is then a name avro-c does not know.
      defined_.insert(it->first);
      type = it->second;
      inline_into(type, space, depth);
      return;
    }
    if (type.is_array()) {
      for (auto& branch : type) inline_into(branch, space, depth + 1);
      return;
    }
    if (!type.is_object() || !type.contains("type")) return;
    auto& inner = type["type"];
    // {"type": {...}} and {"type": [...]}: a level too, or a schema of such wrappers alone would
    // recurse as deep as its text goes.
    if (!inner.is_string()) return inline_into(inner, space, depth + 1);
    const auto kind = inner.get<std::string>();
    if (kind == "record" || kind == "error" || kind == "enum" || kind == "fixed") {
      const auto full = full_name(type, space);
      defined_.insert(full);
      if ((kind == "record" || kind == "error") && type.contains("fields") && type["fields"].is_array()) {
        for (auto& field : type["fields"]) {
          if (field.is_object() && field.contains("type")) inline_into(field["type"], namespace_of(full), depth + 1);
        }
      }
    } else if (kind == "array" && type.contains("items")) {
      inline_into(type["items"], space, depth + 1);
    } else if (kind == "map" && type.contains("values")) {
      inline_into(type["values"], space, depth + 1);
    } else if (!is_primitive(kind)) {
      inline_into(inner, space, depth);  // {"type": "com.acme.Name"}
    }
  }

 private:
  connectors::SchemaRegistry& registry_;
  std::map<std::string, json> definitions_;
  std::set<std::string> defined_;
};

// The logical type `type` (the schema JSON of a node) gives a node of avro type `avro_type`, as
// the Avro specification reads it: one that does not fit its type, or a decimal with an unusable
// scale, is ignored and the node reads as its type.
void read_logical_type(const json* type, Node& node) {
  if (type == nullptr || !type->is_object()) return;
  const auto it = type->find("logicalType");
  if (it == type->end() || !it->is_string()) return;
  const auto& name = it->get_ref<const std::string&>();
  const auto set_if = [&](bool fits, LogicalType logical) {
    if (fits) node.logical = logical;
  };
  if (name == "timestamp-millis") {
    set_if(node.type == AVRO_INT64, LogicalType::timestamp_millis);
  } else if (name == "timestamp-micros") {
    set_if(node.type == AVRO_INT64, LogicalType::timestamp_micros);
  } else if (name == "date") {
    set_if(node.type == AVRO_INT32, LogicalType::date);
  } else if (name == "time-millis") {
    set_if(node.type == AVRO_INT32, LogicalType::time_millis);
  } else if (name == "uuid") {
    set_if(node.type == AVRO_STRING, LogicalType::uuid);
  } else if (name == "decimal") {
    const auto scale = type->find("scale");
    const bool absent = scale == type->end();
    // A scale beyond what 128 bits of unscaled value hold is of no decimal anyone writes.
    const bool usable =
        absent || (scale->is_number_integer() && scale->get<std::int64_t>() >= 0 && scale->get<std::int64_t>() <= 38);
    if ((node.type == AVRO_BYTES || node.type == AVRO_FIXED) && usable) {
      node.logical = LogicalType::decimal;
      node.scale = absent ? 0 : static_cast<int>(scale->get<std::int64_t>());
    }
  }
}

// Builds the node tree from avro-c's parsed schema, walking the schema's JSON alongside it for the
// logical types avro-c does not keep.
class TreeBuilder {
 public:
  explicit TreeBuilder(std::deque<Node>& nodes) : nodes_(nodes) {}

  const Node* build(avro_schema_t schema, const json* type, int depth) {
    if (depth > kMaxNesting) throw BadSchema("the schema nests deeper than " + std::to_string(kMaxNesting));
    if (avro_typeof(schema) == AVRO_LINK) {
      // A named type used again: avro-c defined it before this use, so its node exists.
      const auto it = built_.find(avro_schema_link_target(schema));
      if (it == built_.end()) throw BadSchema("a named type is used before avro-c defined it");
      return it->second;
    }
    // {"type": {...}} and {"type": [...]} are the inner schema.
    while (type != nullptr && type->is_object() && type->contains("type") && !(*type)["type"].is_string()) {
      type = &(*type)["type"];
    }
    Node& node = nodes_.emplace_back();
    built_[schema] = &node;  // before the children: a recursive type links back to it
    node.type = avro_typeof(schema);
    read_logical_type(type, node);
    const auto child_type = [&](const char* key) -> const json* {
      if (type == nullptr || !type->is_object() || !type->contains(key)) return nullptr;
      return &(*type)[key];
    };
    switch (node.type) {
      case AVRO_RECORD: {
        node.name = full_name_of(schema);
        const json* fields = child_type("fields");
        const auto count = avro_schema_record_size(schema);
        node.fields.reserve(count);
        for (std::size_t i = 0; i < count; ++i) {
          const auto index = static_cast<int>(i);
          const json* field_type = nullptr;
          if (fields != nullptr && fields->is_array() && i < fields->size() && (*fields)[i].is_object() &&
              (*fields)[i].contains("type")) {
            field_type = &(*fields)[i]["type"];
          }
          const Node* child = build(avro_schema_record_field_get_by_index(schema, index), field_type, depth + 1);
          node.fields.push_back({avro_schema_record_field_name(schema, index), child});
        }
        node.zero_bytes = true;
        for (const auto& field : node.fields) node.zero_bytes = node.zero_bytes && field.node->zero_bytes;
        break;
      }
      case AVRO_UNION: {
        const auto count = avro_schema_union_size(schema);
        for (std::size_t i = 0; i < count; ++i) {
          const json* branch = type != nullptr && type->is_array() && i < type->size() ? &(*type)[i] : nullptr;
          node.branches.push_back(build(avro_schema_union_branch(schema, static_cast<int>(i)), branch, depth + 1));
        }
        break;
      }
      case AVRO_ARRAY:
        node.items = build(avro_schema_array_items(schema), child_type("items"), depth + 1);
        break;
      case AVRO_MAP:
        node.items = build(avro_schema_map_values(schema), child_type("values"), depth + 1);
        break;
      case AVRO_ENUM: {
        node.name = full_name_of(schema);
        const int count = avro_schema_enum_number_of_symbols(schema);
        for (int i = 0; i < count; ++i) node.symbols.emplace_back(avro_schema_enum_get(schema, i));
        break;
      }
      case AVRO_FIXED:
        node.name = full_name_of(schema);
        node.fixed_size = avro_schema_fixed_size(schema);
        node.zero_bytes = node.fixed_size == 0;
        break;
      case AVRO_NULL:
        node.zero_bytes = true;
        break;
      default:
        break;
    }
    return &node;
  }

 private:
  static std::string full_name_of(avro_schema_t schema) {
    const char* space = avro_schema_namespace(schema);
    const char* name = avro_schema_name(schema);
    std::string full = space != nullptr && *space != '\0' ? std::string(space) + "." : std::string();
    return full + (name != nullptr ? name : "");
  }

  std::deque<Node>& nodes_;
  std::unordered_map<avro_schema_t, const Node*> built_;
};

}  // namespace

std::shared_ptr<const Schema> parse_schema(const connectors::RegisteredSchema& registered,
                                           connectors::SchemaRegistry& registry) {
  auto document = json::parse(registered.text, nullptr, false);
  if (document.is_discarded()) throw BadSchema("the registry's Avro schema is not valid JSON");
  References references(registry);
  references.fetch(registered.references, 0);
  references.inline_into(document, "", 0);  // also refuses a schema nested too deep for what follows
  const std::string text = references.empty() ? registered.text : document.dump();

  auto schema = std::make_shared<Schema>();
  // Debian's avro-c is built without thread-local errors: its error text is one process-wide
  // buffer, so two pipeline threads parsing schemas at once would write it together. Schemas are
  // parsed once per id, so one lock for all of avro-c costs nothing that matters.
  static std::mutex avro_c;
  const std::lock_guard lock(avro_c);
  avro_schema_t parsed = nullptr;
  if (avro_schema_from_json_length(text.data(), text.size(), &parsed) != 0) {
    throw BadSchema("avro-c cannot parse it: " + last_error());
  }
  const SchemaPtr owned(parsed);
  schema->root = TreeBuilder(schema->nodes).build(parsed, &document, 1);
  if (schema->root->type != AVRO_RECORD) {
    throw BadSchema(std::string("the top level is ") + avro_schema_type_name(parsed) +
                    ", not a record: an event is a record of fields");
  }
  return schema;
}

}  // namespace hbingest::event_formats::avro
