#include "hbingest/keyspec/json_event.h"

#include <simdjson.h>

#include <stdexcept>
#include <string>

namespace hbingest::keyspec {

MapEventFields event_fields_from_json(std::string_view json) {
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  const simdjson::padded_string padded(json);
  if (const auto err = parser.parse(padded).get(doc); err) {
    throw std::invalid_argument(std::string("event JSON: ") + simdjson::error_message(err));
  }
  simdjson::dom::object object;
  if (doc.get_object().get(object)) throw std::invalid_argument("event JSON: not an object");
  MapEventFields fields;
  for (const auto member : object) {
    std::string name(member.key);
    const auto& v = member.value;
    switch (v.type()) {
      case simdjson::dom::element_type::STRING: fields.set(name, std::string(std::string_view(v.get_string()))); break;
      case simdjson::dom::element_type::INT64: fields.set(name, std::int64_t{v.get_int64()}); break;
      case simdjson::dom::element_type::UINT64:  // above int64: no exact integer type left
      case simdjson::dom::element_type::DOUBLE: fields.set(name, double{v.get_double()}); break;
      case simdjson::dom::element_type::BOOL: fields.set(name, bool{v.get_bool()}); break;
      case simdjson::dom::element_type::NULL_VALUE: fields.set(name, std::monostate{}); break;
      case simdjson::dom::element_type::ARRAY:
      case simdjson::dom::element_type::OBJECT: fields.set(name, simdjson::minify(v)); break;
    }
  }
  return fields;
}

}  // namespace hbingest::keyspec
