#include "protobuf_schema.h"

#include <google/protobuf/compiler/parser.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <openssl/evp.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <climits>
#include <string_view>
#include <unordered_set>

#include "protobuf_log.h"
#include "schema_cache.h"

namespace hbingest::event_formats {

namespace pb = google::protobuf;

namespace {

// A schema's imports, followed through references of references: real schemas import a handful of
// files a level or two deep, so these only stop a registry (or an attacker who can register
// schemas) from making one schema cost without bound.
constexpr std::size_t kMaxImportDepth = 32;
constexpr std::size_t kMaxImportedFiles = 256;
// compiler::Parser recurses once per nested block and has no limit of its own in 3.21; protobuf's
// parser of serialized descriptors stops at 100 nested messages.
constexpr int kMaxTextNesting = 100;
// What one failure message quotes of protobuf's errors.
constexpr std::size_t kMaxErrors = 3;

// ---- protobuf's error-collector interfaces, implemented here and nowhere else ----
// protobuf 22 renamed their AddError/AddWarning to RecordError/RecordWarning (taking
// absl::string_view): these two classes are the single place to change for it.

// Errors of io::Tokenizer and compiler::Parser, as "line:column: message" (both 1-based).
class TextErrorCollector final : public pb::io::ErrorCollector {
 public:
  void AddError(int line, pb::io::ColumnNumber column, const std::string& message) override {
    add(std::to_string(line + 1) + ":" + std::to_string(column + 1) + ": " + message);
  }
  void AddWarning(int, pb::io::ColumnNumber, const std::string&) override {}

  bool any() const { return count_ > 0; }
  const std::string& text() const { return text_; }

 private:
  void add(const std::string& error) {
    if (count_++ < kMaxErrors) text_ += (text_.empty() ? "" : "; ") + error;
  }
  std::size_t count_ = 0;
  std::string text_;
};

// Errors of DescriptorPool::BuildFileCollectingErrors, as "element: message".
class BuildErrorCollector final : public pb::DescriptorPool::ErrorCollector {
 public:
  void AddError(const std::string& /*filename*/, const std::string& element_name, const pb::Message* /*descriptor*/,
                ErrorLocation /*location*/, const std::string& message) override {
    if (count_++ < kMaxErrors) text_ += (text_.empty() ? "" : "; ") + element_name + ": " + message;
  }
  void AddWarning(const std::string&, const std::string&, const pb::Message*, ErrorLocation,
                  const std::string&) override {}

  const std::string& text() const { return text_; }

 private:
  std::size_t count_ = 0;
  std::string text_;
};

// ---- the two forms a registry gives ----

// The deepest nesting of braces in .proto text, strings and comments skipped; stops counting past
// the limit. A string ends where protobuf's tokenizer ends it: at its closing quote, or at the end
// of its line or a NUL byte (an error, after which the parser goes on): braces after an unclosed
// quote are parsed, so they are counted.
int brace_nesting(std::string_view text) {
  int depth = 0;
  int deepest = 0;
  for (std::size_t i = 0; i < text.size() && deepest <= kMaxTextNesting; ++i) {
    const char c = text[i];
    if (c == '"' || c == '\'') {
      const auto ends_string = [&](std::size_t at) { return text[at] == '\n' || text[at] == '\0'; };
      for (++i; i < text.size() && text[i] != c && !ends_string(i); ++i) {
        if (text[i] == '\\' && i + 1 < text.size() && !ends_string(i + 1)) ++i;
      }
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      i = std::min(text.find('\n', i), text.size());
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      i = std::min(text.find("*/", i + 2), text.size()) + 1;
    } else if (c == '{' || c == '<') {  // '<' opens an aggregate option value as '{' does
      deepest = std::max(deepest, ++depth);
    } else if (c == '}' || c == '>') {
      depth = std::max(0, depth - 1);
    }
  }
  return deepest;
}

// .proto text → FileDescriptorProto named `name`. Throws BadSchema with the parser's line:column,
// naming the file as `label`.
pb::FileDescriptorProto parse_proto_text(std::string_view text, const std::string& name, const std::string& label) {
  if (text.size() > INT_MAX) throw BadSchema(label + " is too large");
  if (brace_nesting(text) > kMaxTextNesting) {
    throw BadSchema(label + " nests blocks more than " + std::to_string(kMaxTextNesting) + " deep");
  }
  pb::io::ArrayInputStream input(text.data(), static_cast<int>(text.size()));
  TextErrorCollector errors;
  pb::io::Tokenizer tokenizer(&input, &errors);
  pb::compiler::Parser parser;
  parser.RecordErrorsTo(&errors);
  pb::FileDescriptorProto file;
  if (!parser.Parse(&tokenizer, &file) || errors.any()) {
    throw BadSchema(label + " is not valid .proto text: " + errors.text());
  }
  file.set_name(name);
  return file;
}

bool is_base64_byte(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '+' || c == '/' || c == '=';
}

// Base64 (standard alphabet, padded, whitespace around it allowed) → bytes; nullopt when it is not.
std::optional<std::string> decode_base64(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return std::nullopt;
  text = text.substr(first, text.find_last_not_of(" \t\r\n") - first + 1);
  if (text.size() % 4 != 0 || text.size() > INT_MAX || !std::all_of(text.begin(), text.end(), is_base64_byte)) {
    return std::nullopt;
  }
  std::string bytes(text.size() / 4 * 3, '\0');
  const int written =
      EVP_DecodeBlock(reinterpret_cast<unsigned char*>(bytes.data()),
                      reinterpret_cast<const unsigned char*>(text.data()), static_cast<int>(text.size()));
  if (written < 0) return std::nullopt;
  // EVP_DecodeBlock counts the padding as zero bytes.
  const auto padding = static_cast<std::size_t>(
      text.end() - std::find_if(text.rbegin(), text.rend(), [](char c) { return c != '='; }).base());
  if (padding > 2) return std::nullopt;
  bytes.resize(static_cast<std::size_t>(written) - padding);
  return bytes;
}

// A registered Protobuf schema's text, in either form, → FileDescriptorProto. `name` is the import
// path it is known by: it replaces the name a serialized descriptor carries, since that is the name
// importing files use.
pb::FileDescriptorProto read_schema_text(std::string_view text, const std::string& name, const std::string& label) {
  if (const auto bytes = decode_base64(text)) {
    pb::FileDescriptorProto file;
    if (file.ParseFromString(*bytes)) {
      file.set_name(name);
      return file;
    }
    // Text of only base64's characters (an empty file with a comment) is possible: try it as text,
    // and say both when it is neither.
    try {
      return parse_proto_text(text, name, label);
    } catch (const BadSchema& e) {
      throw BadSchema(label + " is neither base64 of a serialized FileDescriptorProto nor .proto text (" + e.what() +
                      ")");
    }
  }
  return parse_proto_text(text, name, label);
}

// ---- imports ----

class Resolver {
 public:
  Resolver(connectors::SchemaRegistry& registry, pb::DescriptorPool& pool, std::string root_name)
      : registry_(registry), pool_(pool), root_name_(std::move(root_name)) {}

  // How messages name a file: the schema's own has no import path.
  std::string label(const std::string& name) const { return name == root_name_ ? "the schema" : "'" + name + "'"; }

  // Builds `file` into the pool, after what it imports. `chain`: the import paths from the schema
  // to `file`, `file`'s last.
  const pb::FileDescriptor* build(const pb::FileDescriptorProto& file,
                                  const std::vector<connectors::SchemaReference>& references,
                                  std::vector<std::string>& chain) {
    for (const auto& import : file.dependency()) {
      if (const auto at = std::find(chain.begin(), chain.end(), import); at != chain.end()) {
        std::string cycle;
        for (auto it = at; it != chain.end(); ++it) cycle += *it + " → ";
        throw BadSchema("import cycle: " + cycle + import);
      }
      if (pool_.FindFileByName(import) != nullptr) continue;  // imported by another file already
      const auto reference = std::find_if(references.begin(), references.end(),
                                          [&](const connectors::SchemaReference& r) { return r.name == import; });
      if (reference != references.end()) {
        build_reference(*reference, chain);
      } else if (import.rfind("google/protobuf/", 0) == 0 &&
                 pb::DescriptorPool::generated_pool()->FindFileByName(import) != nullptr) {
        build_well_known(*pb::DescriptorPool::generated_pool()->FindFileByName(import));
      } else {
        throw BadSchema(label(file.name()) + " imports '" + import +
                        "', which is neither among its references nor a google/protobuf file");
      }
    }
    BuildErrorCollector errors;
    const pb::FileDescriptor* built = pool_.BuildFileCollectingErrors(file, &errors);
    if (built == nullptr) throw BadSchema(label(file.name()) + " does not build: " + errors.text());
    return built;
  }

 private:
  void build_reference(const connectors::SchemaReference& reference, std::vector<std::string>& chain) {
    const std::string where = "import '" + reference.name + "' (subject '" + reference.subject + "' version " +
                              std::to_string(reference.version) + ")";
    if (chain.size() >= kMaxImportDepth) {
      throw BadSchema(where + ": imports nest more than " + std::to_string(kMaxImportDepth) + " deep");
    }
    if (++files_ > kMaxImportedFiles) {
      throw BadSchema(where + ": more than " + std::to_string(kMaxImportedFiles) + " imported files");
    }
    connectors::RegisteredSchema schema;
    try {
      schema = registry_.schema_by_subject_version(reference.subject, reference.version);
    } catch (const connectors::SchemaNotFound& e) {
      // The schema's id is known; a reference it cannot resolve makes the schema unusable.
      throw BadSchema(where + " is not in the registry: " + e.what());
    }
    if (schema.type != connectors::SchemaType::protobuf) {
      throw BadSchema(where + " is a " + std::string(connectors::schema_type_name(schema.type)) + " schema");
    }
    chain.push_back(reference.name);
    build(read_schema_text(schema.text, reference.name, where), schema.references, chain);
    chain.pop_back();
  }

  // A google/protobuf file compiled into libprotobuf (timestamp.proto, wrappers.proto, ...),
  // after the ones it imports.
  void build_well_known(const pb::FileDescriptor& file) {
    for (int i = 0; i < file.dependency_count(); ++i) {
      if (pool_.FindFileByName(file.dependency(i)->name()) == nullptr) build_well_known(*file.dependency(i));
    }
    pb::FileDescriptorProto proto;
    file.CopyTo(&proto);
    BuildErrorCollector errors;
    if (pool_.BuildFileCollectingErrors(proto, &errors) == nullptr) {
      throw BadSchema("'" + file.name() + "' does not build: " + errors.text());
    }
  }

  connectors::SchemaRegistry& registry_;
  pb::DescriptorPool& pool_;
  std::string root_name_;
  std::size_t files_ = 0;
};

}  // namespace

std::shared_ptr<const ProtobufSchema> ProtobufSchema::parse(const connectors::RegisteredSchema& schema,
                                                            connectors::SchemaRegistry& registry) {
  // protobuf logs some findings (a file without a syntax statement) instead of reporting them: they
  // go with this schema's error or into one line naming it.
  ProtobufLogCapture said;
  std::shared_ptr<ProtobufSchema> parsed(new ProtobufSchema());
  parsed->id_ = schema.id;
  parsed->pool_ = std::make_unique<pb::DescriptorPool>();
  // The schema's own file has no import path: it is built under a name no import can give.
  const std::string name = "<schema id " + std::to_string(schema.id) + ">";
  try {
    std::vector<std::string> chain{name};
    Resolver resolver(registry, *parsed->pool_, name);
    parsed->file_ = resolver.build(read_schema_text(schema.text, name, "the schema"), schema.references, chain);
  } catch (const BadSchema& e) {
    if (said.text().empty()) throw;
    throw BadSchema(std::string(e.what()) + " (protobuf: " + said.text() + ")");
  }
  if (!said.text().empty()) spdlog::warn("protobuf schema id {}: {}", schema.id, said.text());
  parsed->factory_ = std::make_unique<pb::DynamicMessageFactory>(parsed->pool_.get());
  return parsed;
}

const pb::Descriptor* ProtobufSchema::message_type(const std::vector<std::int32_t>& indexes, std::string& why) const {
  const pb::Descriptor* type = nullptr;
  for (std::size_t level = 0; level < indexes.size(); ++level) {
    const int count = type == nullptr ? file_->message_type_count() : type->nested_type_count();
    if (indexes[level] < 0 || indexes[level] >= count) {
      std::string path;
      for (const auto index : indexes) path += (path.empty() ? "" : ",") + std::to_string(index);
      why = "message indexes [" + path + "] of schema id " + std::to_string(id_) + ": index " +
            std::to_string(indexes[level]) + " is out of range, " +
            (type == nullptr ? "the schema has " : type->full_name() + " has ") + std::to_string(count) +
            (type == nullptr ? " message types" : " nested message types");
      return nullptr;
    }
    type = type == nullptr ? file_->message_type(indexes[level]) : type->nested_type(indexes[level]);
  }
  if (type == nullptr) why = "no message indexes (schema id " + std::to_string(id_) + ")";
  return type;
}

namespace {

bool may_lack_required(const pb::Descriptor& type, std::unordered_set<const pb::Descriptor*>& seen) {
  if (!seen.insert(&type).second) return false;
  if (type.extension_range_count() > 0) return true;  // an extension may be a message that has some
  for (int i = 0; i < type.field_count(); ++i) {
    const pb::FieldDescriptor& field = *type.field(i);
    if (field.is_required()) return true;
    if (field.cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE && may_lack_required(*field.message_type(), seen)) {
      return true;
    }
  }
  return false;
}

}  // namespace

const ProtobufSchema::MessageType& ProtobufSchema::message_info(const pb::Descriptor* type) const {
  auto& slot = types_[type];
  if (slot.prototype == nullptr) {
    std::unordered_set<const pb::Descriptor*> seen;
    slot.may_lack_required = may_lack_required(*type, seen);
    slot.prototype = factory_->GetPrototype(type);
    if (!slot.may_lack_required) slot.wire = &wire_tables_.get(*type);
  }
  return slot;
}

}  // namespace hbingest::event_formats
