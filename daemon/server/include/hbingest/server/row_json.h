#pragma once
// JSON form of query rows, shared by the HTTP handler and the CLI.

#include <string>

#include <nlohmann/json.hpp>

#include "hbingest/query/query.h"

namespace hbingest::server {

// {"key":"<hex>","salt":7,"event_id":"login","time":"2024-05-01T12:00:00.000Z","time_ms":...,
//  "partition":0,"offset":42,"parts":{"<component>":"<text>",...},"columns":{"d:amount":"12.5",...}}
// Decoded fields appear when the spec has the matching component (event_id: its event component).
// Each cell reads back as `columns_written` wrote it (routing::render_value: a long as a number,
// bytes as base64...; text as the string it is); a cell whose bytes do not fit its type reads as
// {"error": why, "value_hex": its bytes}. Null `columns_written`: every cell is text.
// A packed cell (`packed`) reads back as its fields' cells; one that does not decode stays as stored,
// with "packed_error" saying why.
nlohmann::json row_to_json(const query::ResultRow& row, const routing::RowMapping* columns_written = nullptr,
                           const query::PackedCellReader* packed = nullptr);
// The same for a Query's route.
inline nlohmann::json row_to_json(const query::ResultRow& row, const query::Query& query) {
  return row_to_json(row, query.columns_written.get(), query.packed.get());
}

// Serialises without throwing on invalid UTF-8 in cell values (replaced by U+FFFD).
std::string dump_json(const nlohmann::json& value);

}  // namespace hbingest::server
