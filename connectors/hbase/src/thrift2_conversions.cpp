#include "thrift2_conversions.h"

namespace hbingest::connectors {

namespace gen = thrift2::gen;

gen::TTableName to_thrift_table_name(const std::string& table) {
  const auto parsed = TableName::parse(table);
  gen::TTableName name;
  name.__set_ns(parsed.ns);
  name.__set_qualifier(parsed.table);
  return name;
}

std::string encode_ttl_attribute(std::int64_t ttl_ms) {
  std::string bytes(8, '\0');
  auto value = static_cast<std::uint64_t>(ttl_ms);
  for (int i = 7; i >= 0; --i) {
    bytes[static_cast<std::size_t>(i)] = static_cast<char>(value & 0xffU);
    value >>= 8;
  }
  return bytes;
}

std::vector<gen::TPut> to_thrift_puts(std::span<const RowMutation> rows, Durability durability) {
  std::vector<gen::TPut> puts;
  puts.reserve(rows.size());
  for (const auto& row : rows) {
    gen::TPut put;
    put.row = row.row;
    put.columnValues.reserve(row.cells.size());
    for (const auto& cell : row.cells) {
      gen::TColumnValue value;
      value.family = cell.family;
      value.qualifier = cell.qualifier;
      value.value = cell.value;
      put.columnValues.push_back(std::move(value));
    }
    put.__set_timestamp(row.timestamp_ms);
    if (row.ttl_ms) {
      put.__set_attributes({{"_ttl", encode_ttl_attribute(*row.ttl_ms)}});
    }
    if (durability != Durability::use_default) {
      put.__set_durability(static_cast<gen::TDurability::type>(static_cast<int>(durability)));
    }
    puts.push_back(std::move(put));
  }
  return puts;
}

gen::TColumn to_thrift_column(const std::string& column) {
  gen::TColumn out;
  const auto colon = column.find(':');
  if (colon == std::string::npos) {
    out.family = column;
  } else {
    out.family = column.substr(0, colon);
    out.__set_qualifier(column.substr(colon + 1));
  }
  return out;
}

ScannedRow from_thrift_result(gen::TResult&& result) {
  ScannedRow row;
  row.row = std::move(result.row);
  row.cells.reserve(result.columnValues.size());
  for (auto& value : result.columnValues) {
    row.cells.push_back({std::move(value.family), std::move(value.qualifier), std::move(value.value),
                         value.__isset.timestamp ? value.timestamp : 0});
  }
  return row;
}

}  // namespace hbingest::connectors
