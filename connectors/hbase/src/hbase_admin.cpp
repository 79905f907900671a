#include "hbingest/connectors/hbase_admin.h"

#include <algorithm>
#include <map>
#include <set>
#include <stdexcept>

#include "thrift2_connection.h"
#include "thrift2_conversions.h"

namespace hbingest::connectors {

namespace gen = thrift2::gen;

namespace {

gen::TTableName table_name(const std::string& ns, const std::string& table) {
  gen::TTableName name;
  name.__set_ns(ns);
  name.__set_qualifier(table);
  return name;
}

gen::TBloomFilterType::type bloom_type(const std::string& name) {
  static const std::map<std::string, gen::TBloomFilterType::type> kTypes = {{"NONE", gen::TBloomFilterType::NONE},
                                                                            {"ROW", gen::TBloomFilterType::ROW},
                                                                            {"ROWCOL", gen::TBloomFilterType::ROWCOL}};
  const auto it = kTypes.find(name);
  if (it == kTypes.end()) throw std::invalid_argument("unknown bloom filter type '" + name + "' (NONE, ROW, ROWCOL)");
  return it->second;
}

gen::TCompressionAlgorithm::type compression_type(const std::string& name) {
  static const std::map<std::string, gen::TCompressionAlgorithm::type> kTypes = {
      {"NONE", gen::TCompressionAlgorithm::NONE},     {"GZ", gen::TCompressionAlgorithm::GZ},
      {"SNAPPY", gen::TCompressionAlgorithm::SNAPPY}, {"LZ4", gen::TCompressionAlgorithm::LZ4},
      {"ZSTD", gen::TCompressionAlgorithm::ZSTD},     {"BZIP2", gen::TCompressionAlgorithm::BZIP2},
      {"LZO", gen::TCompressionAlgorithm::LZO}};
  const auto it = kTypes.find(name);
  if (it == kTypes.end()) throw std::invalid_argument("unknown compression '" + name + "'");
  return it->second;
}

std::string bloom_name(gen::TBloomFilterType::type type) {
  switch (type) {
    case gen::TBloomFilterType::NONE:
      return "NONE";
    case gen::TBloomFilterType::ROW:
      return "ROW";
    case gen::TBloomFilterType::ROWCOL:
      return "ROWCOL";
    case gen::TBloomFilterType::ROWPREFIX_FIXED_LENGTH:
      return "ROWPREFIX_FIXED_LENGTH";
  }
  return "UNKNOWN";
}

// HBase stores "forever" as Integer.MAX_VALUE seconds.
constexpr std::int64_t kForeverSeconds = 2147483647;

}  // namespace

struct HBaseAdmin::Impl {
  explicit Impl(const Thrift2Options& options) : connection(options) {}
  Thrift2Connection connection;
};

HBaseAdmin::HBaseAdmin(const Thrift2Options& options) : impl_(std::make_unique<Impl>(options)) {}
HBaseAdmin::~HBaseAdmin() = default;

bool HBaseAdmin::table_exists(const std::string& ns, const std::string& table) {
  return impl_->connection.call("tableExists", [&](auto& client) { return client.tableExists(table_name(ns, table)); });
}

bool HBaseAdmin::is_table_enabled(const std::string& ns, const std::string& table) {
  return impl_->connection.call("isTableEnabled",
                                [&](auto& client) { return client.isTableEnabled(table_name(ns, table)); });
}

TableState HBaseAdmin::table_status(const TableName& table, const std::vector<std::string>& families) {
  // A table dropped between two of these calls makes the later one throw (TableNotFoundException):
  // the caller keeps its last verdict and asks again.
  if (!table_exists(table.ns, table.table)) return {TableStatus::missing, {}};
  if (!is_table_enabled(table.ns, table.table)) return {TableStatus::disabled, {}};
  const auto described = describe_families(table.ns, table.table);
  TableState state;
  for (const auto& family : families) {
    const bool found = std::any_of(described.begin(), described.end(),
                                   [&](const FamilyDescription& description) { return description.name == family; });
    if (!found) state.missing_families.push_back(family);
  }
  if (!state.missing_families.empty()) state.status = TableStatus::family_missing;
  return state;
}

std::vector<FamilyDescription> HBaseAdmin::describe_families(const std::string& ns, const std::string& table) {
  gen::TTableDescriptor descriptor;
  impl_->connection.call("getTableDescriptor",
                         [&](auto& client) { client.getTableDescriptor(descriptor, table_name(ns, table)); });
  std::vector<FamilyDescription> families;
  for (const auto& column : descriptor.columns) {
    FamilyDescription family;
    family.name = column.name;
    if (column.__isset.timeToLive && column.timeToLive != kForeverSeconds) family.ttl_seconds = column.timeToLive;
    if (column.__isset.maxVersions) family.max_versions = column.maxVersions;
    if (column.__isset.bloomnFilterType) family.bloom_filter = bloom_name(column.bloomnFilterType);
    families.push_back(std::move(family));
  }
  return families;
}

EnsureResult HBaseAdmin::ensure_table(const TableSpec& spec) {
  // Refused before anything is created: HBase would refuse a table without families itself, but
  // only after the namespace was made, and a family named twice silently once.
  if (spec.families.empty()) throw std::invalid_argument("table " + spec.ns + ":" + spec.table + " has no family");
  std::set<std::string> names;
  for (const auto& family : spec.families) {
    if (!names.insert(family.name).second) {
      throw std::invalid_argument("table " + spec.ns + ":" + spec.table + " names family '" + family.name + "' twice");
    }
    (void)bloom_type(family.bloom_filter);  // unknown names throw here, not after the namespace exists
    (void)compression_type(family.compression);
  }
  if (spec.ns != "default") {
    bool namespace_exists = true;
    try {
      gen::TNamespaceDescriptor existing;
      impl_->connection.call("getNamespaceDescriptor",
                             [&](auto& client) { client.getNamespaceDescriptor(existing, spec.ns); });
    } catch (const HBaseError& e) {
      if (e.retriable()) throw;
      namespace_exists = false;  // NamespaceNotFoundException
    }
    if (!namespace_exists) {
      gen::TNamespaceDescriptor descriptor;
      descriptor.name = spec.ns;
      impl_->connection.call("createNamespace", [&](auto& client) { client.createNamespace(descriptor); });
    }
  }

  if (table_exists(spec.ns, spec.table)) {
    EnsureResult result{EnsureOutcome::already_matches, {}};
    const auto described = describe_families(spec.ns, spec.table);
    const std::string where = spec.ns + ":" + spec.table;
    for (const auto& want : spec.families) {
      const auto found = std::find_if(described.begin(), described.end(),
                                      [&](const FamilyDescription& family) { return family.name == want.name; });
      if (found == described.end()) {
        result.differences.push_back(where + " has no column family '" + want.name + "'");
        continue;
      }
      const std::int64_t want_ttl = want.ttl.count();
      if (found->ttl_seconds.value_or(kForeverSeconds) != want_ttl) {
        result.differences.push_back(where + " family '" + want.name + "' TTL is " +
                                     (found->ttl_seconds ? std::to_string(*found->ttl_seconds) + " s" : "FOREVER") +
                                     ", config wants " + std::to_string(want_ttl) + " s");
      }
      if (found->max_versions && *found->max_versions != want.max_versions) {
        result.differences.push_back(where + " family '" + want.name + "' VERSIONS is " +
                                     std::to_string(*found->max_versions) + ", config wants " +
                                     std::to_string(want.max_versions));
      }
    }
    if (!result.differences.empty()) result.outcome = EnsureOutcome::differs;
    return result;
  }

  std::vector<gen::TColumnFamilyDescriptor> families;
  for (const auto& spec_family : spec.families) {
    gen::TColumnFamilyDescriptor family;
    family.name = spec_family.name;
    family.__set_timeToLive(static_cast<std::int32_t>(spec_family.ttl.count()));
    family.__set_maxVersions(spec_family.max_versions);
    family.__set_bloomnFilterType(bloom_type(spec_family.bloom_filter));
    family.__set_compressionType(compression_type(spec_family.compression));
    families.push_back(std::move(family));
  }
  gen::TTableDescriptor descriptor;
  descriptor.tableName = table_name(spec.ns, spec.table);
  descriptor.__set_columns(families);
  impl_->connection.call("createTable", [&](auto& client) { client.createTable(descriptor, spec.split_keys); });
  return {EnsureOutcome::created, {}};
}

void HBaseAdmin::delete_table(const std::string& ns, const std::string& table) {
  const auto name = table_name(ns, table);
  impl_->connection.call("disableTable", [&](auto& client) { client.disableTable(name); });
  impl_->connection.call("deleteTable", [&](auto& client) { client.deleteTable(name); });
}

}  // namespace hbingest::connectors
