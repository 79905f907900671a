#include "format_events.h"

#include <avro.h>
#include <google/protobuf/compiler/parser.h>
#include <google/protobuf/descriptor.pb.h>
#include <google/protobuf/dynamic_message.h>
#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

namespace hbingest::bench {

namespace {

namespace pb = google::protobuf;
using Json = nlohmann::ordered_json;

// Fields in the order the generator writes them, so that the cells come in the same order as the
// JSON twin's (Avro's are in schema order, Protobuf's in declaration order).
constexpr std::string_view kAvroLogin = R"({"type": "record", "name": "Login", "namespace": "hbingest.bench",
 "fields": [
  {"name": "event_id", "type": "string"},
  {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-millis"}},
  {"name": "user_id", "type": "string"},
  {"name": "ip", "type": "string"},
  {"name": "device", "type": "string"},
  {"name": "success", "type": "boolean"}]})";

constexpr std::string_view kAvroOrder = R"({"type": "record", "name": "Order", "namespace": "hbingest.bench",
 "fields": [
  {"name": "event_id", "type": "string"},
  {"name": "ts", "type": {"type": "long", "logicalType": "timestamp-millis"}},
  {"name": "user_id", "type": "string"},
  {"name": "order_id", "type": "string"},
  {"name": "amount", "type": "double"},
  {"name": "currency", "type": "string"},
  {"name": "status", "type": "string"},
  {"name": "items", "type": {"type": "array", "items": {"type": "record", "name": "Item",
    "fields": [{"name": "sku", "type": "string"}, {"name": "qty", "type": "long"}]}}}]})";

constexpr std::string_view kProtoLogin = R"(syntax = "proto3";
package hbingest.bench;
import "google/protobuf/timestamp.proto";

message Login {
  string event_id = 1;
  google.protobuf.Timestamp ts = 2;
  string user_id = 3;
  string ip = 4;
  string device = 5;
  bool success = 6;
}
)";

constexpr std::string_view kProtoOrder = R"(syntax = "proto3";
package hbingest.bench;
import "google/protobuf/timestamp.proto";

message Order {
  message Item {
    string sku = 1;
    int64 qty = 2;
  }
  string event_id = 1;
  google.protobuf.Timestamp ts = 2;
  string user_id = 3;
  string order_id = 4;
  double amount = 5;
  string currency = 6;
  string status = 7;
  repeated Item items = 8;
}
)";

// The payload is not validated against it (docs/formats.md, "JSON Schema"); it only has to exist.
constexpr std::string_view kJsonSchema = R"({"type": "object"})";

struct SchemaDeleter {
  void operator()(avro_obj_t* schema) const { avro_schema_decref(schema); }
};
struct IfaceDeleter {
  void operator()(avro_value_iface_t* iface) const { avro_value_iface_decref(iface); }
};
struct WriterDeleter {
  void operator()(avro_writer_t_* writer) const { avro_writer_free(writer); }
};
// A generic value of one class, made once and reset before each event.
struct AvroValue {
  avro_value_t value{};
  AvroValue() = default;
  AvroValue(const AvroValue&) = delete;
  AvroValue& operator=(const AvroValue&) = delete;
  ~AvroValue() {
    if (value.iface != nullptr) avro_value_decref(&value);
  }
};

void check_avro(int rc, const std::string& what) {
  if (rc != 0) throw std::runtime_error("avro: " + what + ": " + avro_strerror());
}

const Json& member(const Json& object, const std::string& name, const std::string& path) {
  const auto it = object.find(name);
  if (it == object.end()) throw std::runtime_error("event has no field " + path);
  return *it;
}

// `json` into `value`, by the value's Avro type: the types the bench schemas use.
void set_avro(avro_value_t& value, const Json& json, const std::string& path) {
  switch (avro_value_get_type(&value)) {
    case AVRO_STRING: {
      const auto& text = json.get_ref<const std::string&>();
      check_avro(avro_value_set_string_len(&value, text.c_str(), text.size() + 1), path);
      return;
    }
    case AVRO_INT64:
      check_avro(avro_value_set_long(&value, json.get<std::int64_t>()), path);
      return;
    case AVRO_DOUBLE:
      check_avro(avro_value_set_double(&value, json.get<double>()), path);
      return;
    case AVRO_BOOLEAN:
      check_avro(avro_value_set_boolean(&value, json.get<bool>() ? 1 : 0), path);
      return;
    case AVRO_ARRAY:
      for (std::size_t i = 0; i < json.size(); ++i) {
        avro_value_t item;
        check_avro(avro_value_append(&value, &item, nullptr), path);
        set_avro(item, json.at(i), path + "[" + std::to_string(i) + "]");
      }
      return;
    case AVRO_RECORD: {
      std::size_t fields = 0;
      check_avro(avro_value_get_size(&value, &fields), path);
      if (fields != json.size()) throw std::runtime_error(path + ": the schema and the event differ in fields");
      for (std::size_t i = 0; i < fields; ++i) {
        avro_value_t field;
        const char* name = nullptr;
        check_avro(avro_value_get_by_index(&value, i, &field, &name), path);
        const std::string field_path = path.empty() ? std::string(name) : path + "." + name;
        set_avro(field, member(json, name, field_path), field_path);
      }
      return;
    }
    default:
      throw std::runtime_error(path + ": an Avro type the bench schemas do not use");
  }
}

class AvroWriter {
 public:
  explicit AvroWriter(std::string_view schema_json) {
    avro_schema_t raw = nullptr;
    check_avro(avro_schema_from_json_length(schema_json.data(), schema_json.size(), &raw), "schema");
    schema_.reset(raw);
    iface_.reset(avro_generic_class_from_schema(schema_.get()));
    if (!iface_) throw std::runtime_error(std::string("avro: no class for the schema: ") + avro_strerror());
    check_avro(avro_generic_value_new(iface_.get(), &value_.value), "value");
  }

  std::string write(const Json& event, std::int32_t id) {
    check_avro(avro_value_reset(&value_.value), "reset");
    set_avro(value_.value, event, "");
    std::string out(64 * 1024, '\0');
    constexpr std::size_t kHeader = 5;  // magic byte, 4-byte schema id
    const std::unique_ptr<avro_writer_t_, WriterDeleter> writer(
        avro_writer_memory(out.data() + kHeader, static_cast<std::int64_t>(out.size() - kHeader)));
    check_avro(avro_value_write(writer.get(), &value_.value), "write");
    out.resize(kHeader + static_cast<std::size_t>(avro_writer_tell(writer.get())));
    frame(out, id);
    return out;
  }

  static void frame(std::string& out, std::int32_t id) {
    out[0] = '\0';
    for (int i = 0; i < 4; ++i) {
      out[1 + static_cast<std::size_t>(i)] = static_cast<char>((static_cast<std::uint32_t>(id) >> (24 - 8 * i)) & 0xFF);
    }
  }

 private:
  std::unique_ptr<avro_obj_t, SchemaDeleter> schema_;  // before the class and value made of it
  std::unique_ptr<avro_value_iface_t, IfaceDeleter> iface_;
  AvroValue value_;
};

pb::FileDescriptorProto parse_proto(std::string_view text, const std::string& name) {
  pb::io::ArrayInputStream input(text.data(), static_cast<int>(text.size()));
  pb::io::Tokenizer tokenizer(&input, nullptr);
  pb::compiler::Parser parser;
  pb::FileDescriptorProto file;
  if (!parser.Parse(&tokenizer, &file)) throw std::runtime_error("bench schema does not parse: " + name);
  file.set_name(name);
  return file;
}

void set_scalar(pb::Message& message, const pb::FieldDescriptor* field, const Json& json, const std::string& path);

// `json` (an object) into `message`, field by field by the declared names.
void set_message(pb::Message& message, const Json& json, const std::string& path) {
  const pb::Descriptor* type = message.GetDescriptor();
  const pb::Reflection* reflection = message.GetReflection();
  if (static_cast<std::size_t>(type->field_count()) != json.size()) {
    throw std::runtime_error(path + ": the schema and the event differ in fields");
  }
  for (int i = 0; i < type->field_count(); ++i) {
    const pb::FieldDescriptor* field = type->field(i);
    const std::string field_path = path.empty() ? field->name() : path + "." + field->name();
    const Json& value = member(json, field->name(), field_path);
    if (!field->is_repeated()) {
      set_scalar(message, field, value, field_path);
      continue;
    }
    if (field->cpp_type() != pb::FieldDescriptor::CPPTYPE_MESSAGE) {
      throw std::runtime_error(field_path + ": a repeated type the bench schemas do not use");
    }
    for (std::size_t j = 0; j < value.size(); ++j) {
      set_message(*reflection->AddMessage(&message, field), value.at(j), field_path + "[" + std::to_string(j) + "]");
    }
  }
}

void set_scalar(pb::Message& message, const pb::FieldDescriptor* field, const Json& json, const std::string& path) {
  const pb::Reflection* reflection = message.GetReflection();
  switch (field->cpp_type()) {
    case pb::FieldDescriptor::CPPTYPE_STRING:
      reflection->SetString(&message, field, json.get<std::string>());
      return;
    case pb::FieldDescriptor::CPPTYPE_INT64:
      reflection->SetInt64(&message, field, json.get<std::int64_t>());
      return;
    case pb::FieldDescriptor::CPPTYPE_DOUBLE:
      reflection->SetDouble(&message, field, json.get<double>());
      return;
    case pb::FieldDescriptor::CPPTYPE_BOOL:
      reflection->SetBool(&message, field, json.get<bool>());
      return;
    case pb::FieldDescriptor::CPPTYPE_MESSAGE: {
      pb::Message& sub = *reflection->MutableMessage(&message, field);
      if (field->message_type()->full_name() != "google.protobuf.Timestamp") {
        set_message(sub, json, path);
        return;
      }
      // Epoch ms → seconds and non-negative nanos, as a producer's Timestamp.FromMilliseconds.
      const auto ms = json.get<std::int64_t>();
      const std::int64_t seconds = ms >= 0 ? ms / 1000 : -((-ms + 999) / 1000);
      const auto nanos = static_cast<std::int32_t>((ms - seconds * 1000) * 1000000);
      const pb::Descriptor* timestamp = sub.GetDescriptor();
      sub.GetReflection()->SetInt64(&sub, timestamp->FindFieldByName("seconds"), seconds);
      sub.GetReflection()->SetInt32(&sub, timestamp->FindFieldByName("nanos"), nanos);
      return;
    }
    default:
      throw std::runtime_error(path + ": a Protobuf type the bench schemas do not use");
  }
}

}  // namespace

std::string_view to_string(Format format) {
  switch (format) {
    case Format::json:
      return "json";
    case Format::json_schema:
      return "json_schema";
    case Format::avro:
      return "avro";
    case Format::protobuf:
      return "protobuf";
  }
  return "?";
}

std::string_view avro_schema_text(bool order) { return order ? kAvroOrder : kAvroLogin; }
std::string_view protobuf_schema_text(bool order) { return order ? kProtoOrder : kProtoLogin; }

struct FormatEvents::Impl {
  AvroWriter avro_login{kAvroLogin};
  AvroWriter avro_order{kAvroOrder};
  // The google/protobuf files come from the generated pool beneath it. Declared before the factory
  // and the prototypes, which refer to its descriptors.
  pb::DescriptorPool pool{pb::DescriptorPool::generated_pool()};
  pb::DynamicMessageFactory factory{&pool};
  const pb::Message* login_prototype = nullptr;
  const pb::Message* order_prototype = nullptr;

  Impl() {
    const auto prototype = [&](std::string_view text, const std::string& file, const std::string& type) {
      if (pool.BuildFile(parse_proto(text, file)) == nullptr) throw std::runtime_error("bench schema: " + file);
      return factory.GetPrototype(pool.FindMessageTypeByName(type));
    };
    login_prototype = prototype(kProtoLogin, "login.proto", "hbingest.bench.Login");
    order_prototype = prototype(kProtoOrder, "order.proto", "hbingest.bench.Order");
  }

  std::string protobuf(const Json& event, bool order, std::int32_t id) const {
    const std::unique_ptr<pb::Message> message((order ? order_prototype : login_prototype)->New());
    set_message(*message, event, "");
    // Magic byte, schema id, then the message indexes [0] as the single byte 0 (the file's first
    // message), as Confluent's serializers write them.
    std::string out(6, '\0');
    AvroWriter::frame(out, id);
    if (!message->AppendToString(&out)) throw std::runtime_error("protobuf: serializing failed");
    return out;
  }
};

FormatEvents::FormatEvents() : impl_(std::make_unique<Impl>()) {}
FormatEvents::~FormatEvents() = default;

SchemaIds FormatEvents::default_ids(Format format) {
  switch (format) {
    case Format::avro:
      return {1, 2};
    case Format::protobuf:
      return {3, 4};
    case Format::json_schema:
      return {5, 5};
    case Format::json:
      break;
  }
  return {};
}

std::vector<connectors::RegisteredSchema> FormatEvents::schemas(Format format, SchemaIds ids) const {
  using connectors::RegisteredSchema;
  using connectors::SchemaType;
  switch (format) {
    case Format::avro:
      return {RegisteredSchema{ids.login, SchemaType::avro, std::string(kAvroLogin), {}},
              RegisteredSchema{ids.order, SchemaType::avro, std::string(kAvroOrder), {}}};
    case Format::protobuf:
      return {RegisteredSchema{ids.login, SchemaType::protobuf, std::string(kProtoLogin), {}},
              RegisteredSchema{ids.order, SchemaType::protobuf, std::string(kProtoOrder), {}}};
    case Format::json_schema:
      return {RegisteredSchema{ids.login, SchemaType::json, std::string(kJsonSchema), {}}};
    case Format::json:
      break;
  }
  return {};
}

std::string FormatEvents::convert(std::string_view json, Format format, SchemaIds ids) const {
  if (format == Format::json) return std::string(json);
  const Json event = Json::parse(json);
  const bool order = event.at("event_id").get_ref<const std::string&>() == "order";
  const std::int32_t id = order ? ids.order : ids.login;
  switch (format) {
    case Format::avro:
      return (order ? impl_->avro_order : impl_->avro_login).write(event, id);
    case Format::protobuf:
      return impl_->protobuf(event, order, id);
    case Format::json_schema: {
      std::string out(5, '\0');
      AvroWriter::frame(out, id);
      return out.append(json);
    }
    case Format::json:
      break;
  }
  return std::string(json);
}

}  // namespace hbingest::bench
