#pragma once
// A route's packed cell (`from: kafka:value`) read back for queries: the message value as the
// producer wrote it (JSON, or a Confluent frame whose schema id the registry resolves), decoded by
// the route's input format into one text cell per top-level field (docs/rows.md, "Packed rows").

#include <memory>
#include <mutex>
#include <string>

#include "hbingest/config/config.h"
#include "hbingest/connectors/schema_registry.h"
#include "hbingest/event_formats/input_format.h"
#include "hbingest/query/query.h"

namespace hbingest::app {

class PackedValueReader final : public query::PackedCellReader {
 public:
  // `registry` (null when the format reads no schema) must outlive the reader.
  PackedValueReader(std::string family, std::string qualifier, config::EventFormat format,
                    connectors::SchemaRegistry* registry, event_formats::SchemaCacheLimits limits);

  bool reads(const connectors::ScannedCell& cell) const override;
  bool expand(const connectors::ScannedCell& cell, std::vector<connectors::ScannedCell>& out,
              std::string& why) const override;

 private:
  std::string family_;
  std::string qualifier_;
  // An input format reuses its buffers between messages: one cell at a time.
  mutable std::mutex mutex_;
  std::unique_ptr<event_formats::InputFormat> format_;
};

}  // namespace hbingest::app
