#pragma once
// Table administration over Thrift2: what `hbingest bootstrap` needs. Not thread-safe.

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

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
  FamilySpec family;
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

class HBaseAdmin {
 public:
  explicit HBaseAdmin(const Thrift2Options& options);
  ~HBaseAdmin();
  HBaseAdmin(const HBaseAdmin&) = delete;
  HBaseAdmin& operator=(const HBaseAdmin&) = delete;

  bool table_exists(const std::string& ns, const std::string& table);
  // Families of an existing table. Throws HBaseError when it does not exist.
  std::vector<FamilyDescription> describe_families(const std::string& ns, const std::string& table);
  // Creates namespace and table when missing; an existing table is compared, never modified.
  EnsureResult ensure_table(const TableSpec& spec);
  void delete_table(const std::string& ns, const std::string& table);  // disable + delete

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace hbingest::connectors
