#include "hbingest/connectors/hbase_types.h"

namespace hbingest::connectors {

TableName TableName::parse(std::string_view text, std::string_view default_ns) {
  const auto colon = text.find(':');
  if (colon == std::string_view::npos) return TableName{std::string(default_ns), std::string(text)};
  return TableName{std::string(text.substr(0, colon)), std::string(text.substr(colon + 1))};
}

}  // namespace hbingest::connectors
