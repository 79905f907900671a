#include "packed_cell_reader.h"

#include "hbingest/event_formats/format_factory.h"

namespace hbingest::app {

PackedValueReader::PackedValueReader(std::string family, std::string qualifier, config::EventFormat format,
                                     connectors::SchemaRegistry* registry, event_formats::SchemaCacheLimits limits)
    : family_(std::move(family)),
      qualifier_(std::move(qualifier)),
      format_(event_formats::make_input_format(format, registry, limits)) {}

bool PackedValueReader::reads(const connectors::ScannedCell& cell) const {
  return cell.family == family_ && cell.qualifier == qualifier_;
}

bool PackedValueReader::expand(const connectors::ScannedCell& cell, std::vector<connectors::ScannedCell>& out,
                               std::string& why) const {
  const std::lock_guard lock(mutex_);
  if (const auto failure = format_->parse(cell.value)) {
    why = failure->reason + ": " + failure->message;
    return false;
  }
  // The default mapping's cells: every top-level field that is not null, as text.
  const auto& record = format_->record();
  for (std::size_t i = 0, n = record.member_count(); i < n; ++i) {
    if (record.member_is_null(i)) continue;
    auto& field = out.emplace_back();
    field.family = family_;
    field.qualifier = std::string(record.member_name(i));
    record.append_text(i, field.value);
    field.timestamp_ms = cell.timestamp_ms;
  }
  return true;
}

}  // namespace hbingest::app
