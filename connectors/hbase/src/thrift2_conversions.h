#pragma once
// Conversions between our plain structs and the generated Thrift2 types (private to the module).

#include <string>

#include "hbase_types.h"
#include "hbingest/connectors/hbase_types.h"

namespace hbingest::connectors {

// "ns:table" or "table" → TTableName.
thrift2::gen::TTableName to_thrift_table_name(const std::string& table);

// "family" or "family:qualifier" → TColumn.
thrift2::gen::TColumn to_thrift_column(const std::string& column);

ScannedRow from_thrift_result(thrift2::gen::TResult&& result);

}  // namespace hbingest::connectors
