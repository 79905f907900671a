#pragma once
// The cells `run` writes for the event a decoder has just decoded, by the default row mapping
// (decode.columns in decode.family): what tests compare across input formats.

#include <string_view>
#include <vector>

#include "hbingest/config/config.h"
#include "hbingest/connectors/hbase_types.h"
#include "hbingest/event_formats/event_decoder.h"
#include "hbingest/routing/row_mapping.h"

namespace hbingest::testing {

inline std::vector<connectors::Cell> default_cells(const event_formats::EventDecoder& decoder,
                                                   const config::DecodeConfig& decode, std::string_view payload) {
  routing::RowCells out;
  const auto mapping = routing::RowMapping::from_decode(decode);
  if (const auto error = mapping.apply({decoder.record(), &decoder.fields(), payload}, out)) {
    throw std::runtime_error(error->message);
  }
  return std::move(out.cells);
}

}  // namespace hbingest::testing
