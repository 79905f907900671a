#include "hbingest/server/row_json.h"

#include "hbingest/routing/value_type.h"

namespace hbingest::server {

nlohmann::json row_to_json(const query::ResultRow& row, const routing::RowMapping* columns_written,
                           const query::PackedCellReader* packed) {
  nlohmann::json out = nlohmann::json::object();
  out["key"] = keyspec::to_hex(row.key);
  nlohmann::json parts = nlohmann::json::object();
  for (const auto& part : row.parts) {
    parts[part.name] = part.text;
    if (row.event_component && part.name == *row.event_component) {
      out["event_id"] = part.text;
    } else if (part.type == "salt" && part.number) {
      out["salt"] = *part.number;
    } else if (part.type == "time") {
      out["time"] = part.text;
      if (part.number) out["time_ms"] = *part.number;
    } else if ((part.type == "partition" || part.type == "offset") && part.number) {
      out[part.type] = *part.number;
    }
  }
  out["parts"] = std::move(parts);
  nlohmann::json columns = nlohmann::json::object();
  std::vector<connectors::ScannedCell> fields;
  for (const auto& cell : row.cells) {
    if (packed != nullptr && packed->reads(cell)) {
      std::string why;
      fields.clear();
      if (packed->expand(cell, fields, why)) {
        for (const auto& field : fields) columns[field.family + ":" + field.qualifier] = field.value;
        continue;
      }
      out["packed_error"] = why;
    }
    auto& value = columns[cell.family + ":" + cell.qualifier];
    const auto type =
        columns_written != nullptr ? columns_written->type_of(cell.family, cell.qualifier) : routing::ValueType::text;
    if (type == routing::ValueType::text) {
      value = cell.value;
    } else if (auto problem = routing::render_value(cell.value, type, value)) {
      value = {{"error", *problem}, {"value_hex", keyspec::to_hex(cell.value)}};
    }
  }
  out["columns"] = std::move(columns);
  return out;
}

std::string dump_json(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace hbingest::server
