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
