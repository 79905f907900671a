#pragma once
// Conversions between our plain structs and the generated Thrift2 types (private to the module).

#include <span>
#include <string>
#include <vector>

#include "hbase_types.h"
#include "hbingest/connectors/hbase_types.h"

namespace hbingest::connectors {

// "ns:table" or "table" → TTableName.
thrift2::gen::TTableName to_thrift_table_name(const std::string& table);

std::vector<thrift2::gen::TPut> to_thrift_puts(std::span<const RowMutation> rows, Durability durability);

// "family" or "family:qualifier" → TColumn.
thrift2::gen::TColumn to_thrift_column(const std::string& column);

ScannedRow from_thrift_result(thrift2::gen::TResult&& result);

// The 8-byte big-endian encoding HBase's Bytes.toBytes(long) uses for the `_ttl` attribute.
std::string encode_ttl_attribute(std::int64_t ttl_ms);

}  // namespace hbingest::connectors
