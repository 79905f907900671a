#pragma once
// Table administration over Thrift2: what `hbingest bootstrap` and the running daemon's table
// watch need. Not thread-safe.

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "hbingest/connectors/hbase_types.h"
#include "hbingest/connectors/thrift2_options.h"

namespace hbingest::connectors {

struct FamilySpec {
  std::string name = "d";
  std::chrono::seconds ttl{600};
  int max_versions = 1;
  std::string bloom_filter = "ROW";  // NONE | ROW | ROWCOL
  std::string compression = "NONE";  // NONE | GZ | SNAPPY | LZ4 | ZSTD | ...
};

struct TableSpec {
  std::string ns = "default";
  std::string table;
  // Every family the routes write to (names unique, at least one); one, "d", by default.
  std::vector<FamilySpec> families{FamilySpec{}};
  std::vector<std::string> split_keys;  // region boundaries (buckets-1 keys for n salt buckets)
};

struct FamilyDescription {
  std::string name;
  std::optional<std::int64_t> ttl_seconds;  // nullopt: FOREVER
  std::optional<int> max_versions;
  std::optional<std::string> bloom_filter;
};

enum class EnsureOutcome { created, already_matches, differs };

struct EnsureResult {
  EnsureOutcome outcome;
  std::vector<std::string> differences;  // what differs from the spec, when outcome == differs
};

// Whether puts into a table can succeed, as HBase's master sees it.
enum class TableStatus {
  writable,        // exists, enabled, has every column family asked about
  missing,         // no such table (dropped, or never created)
  disabled,        // exists but disabled (or disabling/enabling)
  family_missing,  // enabled, without (some of) the column families the cells go to
};

struct TableState {
  TableStatus status = TableStatus::writable;
  // With family_missing: the families asked about that the table lacks, in the order asked.
  std::vector<std::string> missing_families;
  friend bool operator==(const TableState&, const TableState&) = default;
};

// What the running daemon's table watch asks of HBase about a route table; HBaseAdmin answers over
// Thrift2, tests fake it.
class TableStatusSource {
 public:
  virtual ~TableStatusSource() = default;
  // `families`: those the table's routes write to. Throws HBaseError when HBase cannot tell:
  // gateway or master unreachable, or the gateway's user may not describe the table
  // (getTableDescriptor needs ADMIN or CREATE under HBase's ACLs).
  virtual TableState table_status(const TableName& table, const std::vector<std::string>& families) = 0;
  // Creates the table (and its namespace) when missing; see HBaseAdmin::ensure_table. Throws
  // HBaseError when HBase refuses or cannot answer.
  virtual EnsureResult ensure_table(const TableSpec& spec) = 0;
};

class HBaseAdmin final : public TableStatusSource {
 public:
  explicit HBaseAdmin(const Thrift2Options& options);
  ~HBaseAdmin() override;
  HBaseAdmin(const HBaseAdmin&) = delete;
  HBaseAdmin& operator=(const HBaseAdmin&) = delete;

  bool table_exists(const std::string& ns, const std::string& table);
  // Throws HBaseError when the table does not exist.
  bool is_table_enabled(const std::string& ns, const std::string& table);
  // Three master calls: tableExists, isTableEnabled, getTableDescriptor.
  TableState table_status(const TableName& table, const std::vector<std::string>& families) override;
  // Families of an existing table. Throws HBaseError when it does not exist.
  std::vector<FamilyDescription> describe_families(const std::string& ns, const std::string& table);
  // Creates namespace and table (with every family of the spec) when missing; an existing table
  // is compared family by family (missing, TTL, VERSIONS), never modified. Families the table has
  // beyond the spec's are no difference. Throws std::invalid_argument for a spec without families,
  // with a family named twice, or with an unknown bloom filter or compression.
  EnsureResult ensure_table(const TableSpec& spec) override;
  void delete_table(const std::string& ns, const std::string& table);  // disable + delete

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hbingest::connectors
